"""The tool registry (workflows/tools.py): the wire names, one activity per tool registered under its name,
the tools a round offers, and the turn loop's dispatch on the registry."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio import activity

from workflows.activities import TOOL_ACTIVITIES, TurnActivities
from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
from workflows.prompt import tools_section
from workflows.providers.base import ModelResponse, ToolCall, ToolResult
from workflows.tools import SUCCEEDED, TOOLS, CallOutcome, Grant, ToolName, tool_named, tools_for
from workflows.turn_workflow import run_turn
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.recall import MemoryWrite, RecallStatus
from workspace_memory.turns.turn_contract import RoundReceipt, ToolOutcome, TurnInput, TurnView

pytestmark = pytest.mark.unit

# The one place a test spells the wire names: they are in every recorded history and transcript.
WIRE_NAMES = (
    "remember_in_memory",
    "working_notes_get",
    "working_notes_update",
    "working_notes_clear",
    "save_memory",
    "read_memory",
    "forget_memory",
    "search_memory",
    "verify_memory",
)
HISTORY = Path(__file__).resolve().parents[2] / "histories" / "agent_turn.json"


def test_the_wire_names_never_change() -> None:
    assert tuple(ToolName) == WIRE_NAMES


def test_the_recorded_turn_schedules_the_model_round_and_every_tool_by_its_name() -> None:
    events = json.loads(HISTORY.read_text(encoding="utf-8"))["events"]
    scheduled = {
        e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for e in events
        if "activityTaskScheduledEventAttributes" in e
    }
    assert scheduled == {"model_round", *ToolName}


def test_every_tool_has_an_entry_and_one_activity_registered_under_its_name() -> None:
    assert list(TOOLS) == list(ToolName)
    assert list(TOOL_ACTIVITIES) == list(ToolName)
    for name, tool in TOOLS.items():
        assert tool.name is name
        assert tool.spec().name == name
    for name, run in TOOL_ACTIVITIES.items():
        assert activity._Definition.must_from_callable(run).name == name
    assert activity._Definition.must_from_callable(TurnActivities.model_round).name == "model_round"


def test_outcome_vocabularies_do_not_overlap() -> None:
    """Both are keys of the same `says` mappings: a shared value would silently merge two outcomes."""
    assert not {o.value for o in Outcome} & {o.value for o in CallOutcome}
    assert {
        Outcome.COMMITTED,
        CallOutcome.READ,
        CallOutcome.SAVED,
        CallOutcome.CLEARED,
        CallOutcome.PROPOSED,
        CallOutcome.FOUND,
    } == SUCCEEDED
    for tool in TOOLS.values():
        assert set(tool.says) <= {*Outcome, *CallOutcome}, tool.name


def test_a_tool_with_required_arguments_says_what_it_expects() -> None:
    for tool in TOOLS.values():
        assert (tool.bad_arguments is not None) == bool(tool.input_schema.get("required")), tool.name


@pytest.mark.parametrize(
    ("memory_write", "session", "memory_read", "offered"),
    [
        (MemoryWrite.COMMIT, True, True, list(ToolName)),
        (MemoryWrite.COMMIT, True, False, [n for n in ToolName if TOOLS[n].grant is not Grant.MEMORY_READ]),
        # in read_only a verification is refused (a claim about now is no proposal): it is not offered
        (MemoryWrite.PROPOSE, False, False, [ToolName.REMEMBER, ToolName.SAVE_MEMORY, ToolName.FORGET_MEMORY]),
        (
            MemoryWrite.COMMIT,
            False,
            False,
            [ToolName.REMEMBER, ToolName.SAVE_MEMORY, ToolName.FORGET_MEMORY, ToolName.VERIFY_MEMORY],
        ),
        (MemoryWrite.NONE, True, False, [t.name for t in TOOLS.values() if t.grant is Grant.SESSION]),
        (MemoryWrite.NONE, False, True, [ToolName.READ_MEMORY, ToolName.SEARCH_MEMORY]),
        (MemoryWrite.NONE, False, False, []),
    ],
)
def test_tools_follow_authority(
    memory_write: MemoryWrite, session: bool, memory_read: bool, offered: list[ToolName]
) -> None:
    specs = tools_for(memory_write=memory_write, session=session, memory_read=memory_read)
    assert [spec.name for spec in specs] == offered


def test_tool_named() -> None:
    assert tool_named(ToolName.NOTES_GET.value) is ToolName.NOTES_GET
    assert tool_named("shell") is None


def test_the_turn_loop_dispatches_on_the_registry() -> None:
    """`run_turn` hands a known tool to the tool activity by name and answers an unknown one itself."""
    turn = TurnInput(
        turn_id="t", conversation_id="c", workspace_id="w", user_id="u", admission_id="a", credential="x", message="m"
    )
    calls = [ToolCall(id="1", name=name, arguments={}) for name in (*ToolName, "shell")]
    ran: list[ToolName] = []

    async def model_round(data: RoundInput) -> RoundOutput:
        stop = data.round > 1
        response = ModelResponse(
            text="done" if stop else "",
            tool_calls=[] if stop else calls,
            stop_reason="end_turn" if stop else "tool_use",
        )
        return RoundOutput(response=response, receipt=RoundReceipt(round=data.round, status=RecallStatus.OK))

    async def tool(name: ToolName, data: ToolInput) -> ToolRun:
        assert data.call.name == name
        ran.append(name)
        return ToolRun(
            result=ToolResult(tool_call_id=data.call.id, name=name, content="ok"),
            outcome=ToolOutcome(round=data.round, tool=name, ok=True, outcome=CallOutcome.READ),
        )

    view = asyncio.run(run_turn(turn, TurnView(conversation_id="c", status="running"), model_round, tool))
    assert ran == list(ToolName)
    assert (view.status, view.answer, view.rounds) == ("completed", "done", 2)
    unknown = view.tool_outcomes[-1]
    assert (unknown.tool, unknown.ok, unknown.outcome) == ("shell", False, CallOutcome.UNKNOWN_TOOL)


def test_the_write_tools_say_who_sees_what_they_write() -> None:
    """The leakage control of the shared scope is the tools' own words (docs/decisions/0054): workspace entries are
    seen by every member, personal facts belong in member scope, which `save_memory` takes; the notes tool and the
    workspace memory tool say never to write secrets."""
    save = TOOLS[ToolName.SAVE_MEMORY]
    assert "seen by every member" in save.description
    assert "personal facts" in save.description
    assert "scope member" in save.description
    assert "Never save secrets or credentials" in save.description
    scope = save.input_schema["properties"]["scope"]
    assert scope["enum"] == ["workspace", "member"]
    assert "scope" not in save.input_schema["required"]  # workspace unless the model says member
    notes = TOOLS[ToolName.NOTES_UPDATE]
    assert "Never write secrets, credentials or personal data" in notes.description
    remember = TOOLS[ToolName.REMEMBER]
    assert "Every member reads it" in remember.description
    assert "secrets" in remember.description
    # the tools section of the system prompt is these descriptions, word for word
    assert save.description in (tools_section([save.spec(), notes.spec()]) or "")
