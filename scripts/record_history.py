"""Records a turn's workflow history for the replay test (`tests/unit/workflows/test_replay.py`).

Run it after a deliberate change to the workflow's commands: `python -m scripts.record_history`. It starts
a throwaway local stack (moto server, gateway, Temporal dev server, worker in a thread), runs one turn that
uses every tool, and writes the history JSON. Payloads are recorded with the plain pydantic converter (no
KMS codec), because the KMS key of a throwaway stack cannot decrypt anything later; the workflow code under
replay is the same.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import uuid
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from scripts.bench.turns import CapturingRunner
from scripts.localstack.resources import isolate_environment
from scripts.localstack.stack import LocalStack, StackConfig
from workflows.tools import ToolName
from workflows.worker import build_worker_parts
from workspace_memory.bootstrap import build_services
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.service import TurnService
from workspace_memory.turns.turn_contract import WORKFLOW_NAME, TurnInput, TurnView
from workspace_memory.workspaces.access import ShareType

OUT = Path(__file__).resolve().parents[1] / "tests" / "histories" / "agent_turn.json"
DOCUMENT = "# Memory\n- recorded for replay\n"
"""The document's version 1, which the turn's `verify_memory` cites as its evidence."""
MESSAGE = (
    "remember: - replay keeps us honest\nnote: first note\nshow notes\nclear notes\n"
    "save: Replay | histories are recorded\nread: saved\nsearch: recorded histories\n"
    f"verify: saved | 1 | document-version 1 {hashlib.sha256(DOCUMENT.encode()).hexdigest()}\n"
    "drop: saved\nWhat do you know?"
)
OWNER = "recorder"


def admitted_turn(settings: Settings) -> TurnInput:
    """A turn admitted as the turns route admits it, in an `auto` workspace with a saved document. The
    admission freezes the session: the turn's notes tools reach only that session's notebook."""
    svc = build_services(settings)
    ws = svc.access.create_workspace(OWNER, "replay", ShareType.SHARED)
    svc.access.set_ai(OWNER, ws, True)
    svc.policy.set(OWNER, ws, Mode.AUTO, 0)
    svc.document.save(OWNER, ws, DOCUMENT, 0)
    runner = CapturingRunner()
    request = AdmissionRequest(
        conversation_id="conv-replay",
        workspace_id=ws,
        user_id=OWNER,
        idempotency_key="record",
        session_id=f"sess-{uuid.uuid4().hex[:8]}",
        message=MESSAGE,
    )
    TurnService(svc.table, svc.admission, runner).start(request)
    # one tool call a round, then the answer: a round for each tool and one more (more than a turn's default)
    return runner.started[-1].model_copy(update={"max_rounds": len(ToolName) + 1})


def main() -> None:
    isolate_environment()
    with LocalStack(StackConfig(table_name="wm-record")) as stack:
        settings = stack.worker_settings(automation_auth="dev:recorder")
        turn = admitted_turn(settings)
        parts = dataclasses.replace(build_worker_parts(settings), converter=pydantic_data_converter)
        stack.worker_thread(settings, parts)
        history = asyncio.run(_run(settings, turn))
    OUT.write_text(history, encoding="utf-8")
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")


async def _run(settings: Settings, turn: TurnInput) -> str:
    client = await Client.connect(settings.temporal_address, data_converter=pydantic_data_converter)
    handle = await client.start_workflow(
        WORKFLOW_NAME, turn, id=turn.turn_id, task_queue=settings.temporal_task_queue, result_type=TurnView
    )
    view = await handle.result()
    every_tool_ran = len(view.tool_outcomes) == len(ToolName) and all(o.ok for o in view.tool_outcomes)
    if view.status != "completed" or not every_tool_ran:
        raise RuntimeError(f"the recorded turn did not run every tool successfully: {view}")
    return (await handle.fetch_history()).to_json()


if __name__ == "__main__":
    main()
