"""The agent turn: model rounds and tool calls, bounded by a round limit. Deterministic, no I/O.

Memory and notes are read inside the model-round activity, so the workflow holds only the conversation of
the turn (the user's message, the model's outputs, tool results) and receipt metadata.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.activities import TOOL_ACTIVITIES, TurnActivities
    from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
    from workflows.providers.base import Message, ToolCall, ToolResult
    from workflows.tools import CallOutcome, ToolName, tool_named
    from workspace_memory.turns.turn_contract import STATUS_QUERY, WORKFLOW_NAME, ToolOutcome, TurnInput, TurnView

ROUND_LIMIT_ANSWER = "(The turn stopped at its round limit before the model gave a final answer.)"

MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=20),
    maximum_attempts=6,
)
TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=500),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=5,
)
HEARTBEAT_TIMEOUT = timedelta(seconds=5)
"""An attempt whose worker sent no heartbeat for this long is taken for dead and retried on another worker
(the worker beats every second while an activity runs: `workflows.liveness`). The start-to-close timeouts
still bound a call that hangs in a live worker."""


ModelRound = Callable[[RoundInput], Awaitable[RoundOutput]]
ToolActivity = Callable[[ToolName, ToolInput], Awaitable[ToolRun]]


async def run_turn(turn: TurnInput, view: TurnView, model_round: ModelRound, tool: ToolActivity) -> TurnView:
    """The turn's loop, apart from how an activity is executed: the workflow runs each step as a Temporal
    activity, the benchmark's baseline calls the same activity methods directly."""
    messages = [Message(role="user", text=turn.message)]
    base_version = 0
    for number in range(1, turn.max_rounds + 1):
        out = await model_round(RoundInput(turn=turn, round=number, messages=messages))
        view.rounds = number
        view.receipts.append(out.receipt)
        if out.receipt.revision is not None:
            base_version = out.receipt.revision
        response = out.response
        messages.append(Message(role="assistant", text=response.text, tool_calls=response.tool_calls))
        if not response.tool_calls:
            view.answer = response.text
            break
        results = []
        for call in response.tool_calls:
            name = tool_named(call.name)
            if name is None:
                run = _failed(number, call, f"Unknown tool {call.name!r}.", CallOutcome.UNKNOWN_TOOL)
            else:
                run = await tool(name, ToolInput(turn=turn, round=number, call=call, base_version=base_version))
            results.append(run.result)
            view.tool_outcomes.append(run.outcome)
            if run.proposal is not None:
                view.proposals.append(run.proposal)
        messages.append(Message(role="tool", tool_results=results))
    else:
        view.answer = ROUND_LIMIT_ANSWER
    view.status = "completed"
    return view


@workflow.defn(name=WORKFLOW_NAME)
class AgentTurnWorkflow:
    def __init__(self) -> None:
        self._view: TurnView | None = None

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> TurnView:
        assert self._view is not None
        return self._view

    @workflow.run
    async def run(self, turn: TurnInput) -> TurnView:
        self._view = TurnView(conversation_id=turn.conversation_id, status="running")
        return await run_turn(turn, self._view, self._model_round, self._tool)

    @staticmethod
    async def _model_round(data: RoundInput) -> RoundOutput:
        return await workflow.execute_activity_method(
            TurnActivities.model_round,
            data,
            start_to_close_timeout=timedelta(seconds=120),
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=MODEL_RETRY,
        )

    @staticmethod
    async def _tool(name: ToolName, data: ToolInput) -> ToolRun:
        try:
            run = await workflow.execute_activity_method(
                TOOL_ACTIVITIES[name],
                data,
                start_to_close_timeout=timedelta(seconds=15),
                heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=TOOL_RETRY,
            )
        except ActivityError:
            text = "The tool could not be reached; whether it took effect is unknown."
            return _failed(data.round, data.call, text, CallOutcome.UNAVAILABLE)
        return run


def _failed(number: int, call: ToolCall, text: str, outcome: CallOutcome) -> ToolRun:
    return ToolRun(
        result=ToolResult(tool_call_id=call.id, name=call.name, content=text, is_error=True),
        outcome=ToolOutcome(round=number, tool=call.name, ok=False, outcome=outcome),
    )
