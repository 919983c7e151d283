"""Replays a recorded turn history against today's workflow code: a non-deterministic change fails here.

Re-record with `python -m scripts.record_history` only for a deliberate, versioned change of the
workflow's commands (and say so in the commit).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.tools import ToolName
from workflows.turn_workflow import AgentTurnWorkflow
from workspace_memory.turns.turn_contract import WORKFLOW_NAME, TurnInput, TurnView

pytestmark = [pytest.mark.unit, pytest.mark.slow]  # a Temporal replayer per history (~10 s each)

HISTORIES = Path(__file__).resolve().parents[2] / "histories"


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class Reordered:
    """A workflow whose first command differs from the recorded one's (a tool before the model round)."""

    @workflow.run
    async def run(self, turn: TurnInput) -> TurnView:
        await workflow.execute_activity(ToolName.NOTES_GET.value, turn, start_to_close_timeout=timedelta(seconds=5))
        return TurnView(conversation_id=turn.conversation_id, status="completed")


@pytest.mark.parametrize("path", sorted(HISTORIES.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))
    replayer = Replayer(workflows=[AgentTurnWorkflow], data_converter=pydantic_data_converter)
    result = asyncio.run(replayer.replay_workflow(history, raise_on_replay_failure=False))
    assert result.replay_failure is None


def test_a_changed_workflow_fails_replay() -> None:
    """The guard works: the same history against a workflow that orders its commands differently."""
    path = HISTORIES / "agent_turn.json"
    history = WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))
    replayer = Replayer(workflows=[Reordered], data_converter=pydantic_data_converter)
    result = asyncio.run(replayer.replay_workflow(history, raise_on_replay_failure=False))
    assert result.replay_failure is not None
