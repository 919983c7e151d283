"""The turn workflow on a real worker and the real Temporal dev server, its activities mocked by name (the
style of temporalio/samples-python's hello_activity_test): the workflow's own logic - rounds, tool dispatch,
the round limit, a tool that cannot be reached - checked without the services behind the activities.

The mocks are registered under the activity type names the workflow history records (`model_round` and the
tool names), so a renamed activity fails here as it would fail a replay.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
from workflows.providers.base import ModelResponse, ToolCall, ToolResult
from workflows.tools import CallOutcome, ToolName
from workflows.turn_workflow import ROUND_LIMIT_ANSWER, AgentTurnWorkflow
from workspace_memory.kernel.terms import Outcome, RecallStatus
from workspace_memory.turns.turn_contract import ToolOutcome, TurnInput, TurnView

pytestmark = pytest.mark.integration


def turn(max_rounds: int = 4) -> TurnInput:
    return TurnInput(
        turn_id=f"turn-{uuid.uuid4().hex[:8]}",
        conversation_id="conv-mocked",
        workspace_id="ws-mocked",
        user_id="user-mocked",
        admission_id="adm-mocked",
        credential="credential-mocked",
        message="What do we deploy on?",
        max_rounds=max_rounds,
    )


def model_answering(calls_per_round: list[list[str]]) -> Callable[[RoundInput], RoundOutput]:
    """A `model_round` that asks for the named tools in each round, then answers with the round's number."""

    def model_round(data: RoundInput) -> RoundOutput:
        names = calls_per_round[data.round - 1] if data.round <= len(calls_per_round) else []
        calls = [ToolCall(id=f"call-{data.round}-{n}", name=name, arguments={}) for n, name in enumerate(names)]
        response = ModelResponse(
            text=f"answer after {len(data.messages)} messages",
            tool_calls=calls,
            stop_reason="tool_use" if calls else "end_turn",
        )
        return RoundOutput(response=response, receipt={"round": data.round, "status": RecallStatus.OK, "revision": 7})

    return model_round


async def run(
    address: str, model: Callable[[RoundInput], RoundOutput], tools: list[Callable[..., object]], data: TurnInput
) -> TurnView:
    """The workflow on a worker of its own task queue, the mocked activities registered by name."""

    @activity.defn(name="model_round")
    async def model_round(data: RoundInput) -> RoundOutput:
        return model(data)

    client = await Client.connect(address, data_converter=pydantic_data_converter)
    queue = f"mocked-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[AgentTurnWorkflow], activities=[model_round, *tools]):
        return await client.execute_workflow(AgentTurnWorkflow.run, data, id=data.turn_id, task_queue=queue)


@activity.defn(name=ToolName.READ_MEMORY)
async def read_memory(data: ToolInput) -> ToolRun:
    """Answers with the base version the workflow passed: the revision of the round's recall receipt."""
    result = ToolResult(tool_call_id=data.call.id, name=data.call.name, content=f"read at {data.base_version}")
    outcome = ToolOutcome(round=data.round, tool=data.call.name, ok=True, outcome=CallOutcome.READ)
    return ToolRun(result=result, outcome=outcome)


@activity.defn(name=ToolName.SAVE_MEMORY)
async def save_memory_unreachable(data: ToolInput) -> ToolRun:
    raise ApplicationError("the store is down", non_retryable=True)


def test_a_tool_round_then_an_answer(temporal_address: str) -> None:
    view = asyncio.run(run(temporal_address, model_answering([[ToolName.READ_MEMORY]]), [read_memory], turn()))
    assert (view.status, view.rounds) == ("completed", 2)
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [(ToolName.READ_MEMORY, CallOutcome.READ)]
    assert view.answer == "answer after 3 messages"  # the user's message, the tool call, its result
    assert [r.round for r in view.receipts] == [1, 2]


def test_the_round_limit_stops_a_model_that_never_answers(temporal_address: str) -> None:
    always: list[list[str]] = [[ToolName.READ_MEMORY]] * 10
    view = asyncio.run(run(temporal_address, model_answering(always), [read_memory], turn(max_rounds=3)))
    assert (view.status, view.rounds, view.answer) == ("completed", 3, ROUND_LIMIT_ANSWER)
    assert len(view.tool_outcomes) == 3


def test_an_unknown_tool_and_an_unreachable_one_are_outcomes_not_failures(temporal_address: str) -> None:
    calls: list[list[str]] = [["no_such_tool", ToolName.SAVE_MEMORY]]
    view = asyncio.run(run(temporal_address, model_answering(calls), [save_memory_unreachable], turn()))
    assert view.status == "completed"
    assert [(o.tool, o.ok, o.outcome) for o in view.tool_outcomes] == [
        ("no_such_tool", False, CallOutcome.UNKNOWN_TOOL),
        (ToolName.SAVE_MEMORY, False, CallOutcome.UNAVAILABLE),
    ]


EVIDENCE = [{"kind": "document-version", "ref": "1", "sha256": "a" * 64}]


@activity.defn(name=ToolName.VERIFY_MEMORY)
async def verify_memory(data: ToolInput) -> ToolRun:
    """The first call's evidence reads differently now, the second's holds: what the activity would say."""
    stale = data.round == 1
    content = "Not verified: source 1 changed" if stale else f"Verified entry {data.call.arguments['entryId']}"
    outcome = CallOutcome.EVIDENCE_NOT_CURRENT if stale else Outcome.COMMITTED
    result = ToolResult(tool_call_id=data.call.id, name=data.call.name, content=content, is_error=stale)
    said = ToolOutcome(round=data.round, tool=data.call.name, ok=not stale, outcome=outcome)
    return ToolRun(result=result, outcome=said)


def verifying_model(data: RoundInput) -> RoundOutput:
    """Calls `verify_memory` with an entry id, base revision and evidence in rounds 1 and 2, then answers with the
    tool results it was handed."""
    calls = []
    if data.round <= 2:
        arguments = {"entryId": "en_1", "revision": 3, "evidence": EVIDENCE}
        calls = [ToolCall(id=f"call-{data.round}", name=ToolName.VERIFY_MEMORY, arguments=arguments)]
    handed = [r.content for m in data.messages for r in m.tool_results]
    response = ModelResponse(text=" | ".join(handed), tool_calls=calls, stop_reason="tool_use" if calls else "end_turn")
    return RoundOutput(response=response, receipt={"round": data.round, "status": RecallStatus.OK, "revision": 7})


def test_verify_memory_runs_as_its_own_activity_and_its_result_reaches_the_model(temporal_address: str) -> None:
    view = asyncio.run(run(temporal_address, verifying_model, [verify_memory], turn()))
    assert (view.status, view.rounds) == ("completed", 3)
    assert [(o.tool, o.ok, o.outcome) for o in view.tool_outcomes] == [
        (ToolName.VERIFY_MEMORY, False, CallOutcome.EVIDENCE_NOT_CURRENT),
        (ToolName.VERIFY_MEMORY, True, Outcome.COMMITTED),
    ]
    assert view.answer == "Not verified: source 1 changed | Verified entry en_1"
