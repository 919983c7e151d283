"""Records a turn's workflow history for the replay test (`tests/unit/test_replay.py`).

Run it after a deliberate change to the workflow's commands: `python -m scripts.record_history`. It starts
a throwaway moto server, gateway and Temporal dev server, runs one turn that uses every tool, and writes
the history JSON. Payloads are recorded with the plain pydantic converter (no KMS codec), because the KMS
key of a throwaway stack cannot decrypt anything later; the workflow code under replay is the same.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import uuid
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from scripts.localstack.__main__ import start_moto
from scripts.localstack.gateway import Gateway, make_server
from scripts.localstack.resources import FAKE_CREDENTIALS, provision
from scripts.localstack.temporal import free_port, start_temporal, stop
from workflows.worker import build_worker_parts, worker_in_thread
from workspace_memory.access import ShareType
from workspace_memory.bootstrap import build_services
from workspace_memory.policy import Mode
from workspace_memory.settings import Settings
from workspace_memory.turn_contract import WORKFLOW_NAME, TurnInput, TurnView, turn_id_for

OUT = Path(__file__).resolve().parents[1] / "tests" / "histories" / "agent_turn.json"
MESSAGE = "remember: - replay keeps us honest\nnote: first note\nshow notes\nclear notes\nWhat do you know?"


def main() -> None:
    os.environ.update(FAKE_CREDENTIALS)
    moto, endpoint = start_moto(free_port())
    temporal, address = start_temporal(free_port(), None, None)
    server = None
    try:
        resources = provision(endpoint, "wm-record")
        os.environ.update({**resources.environment(), "TEMPORAL_ADDRESS": address})
        server = make_server(Gateway(), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        settings = Settings(
            table_name=resources.table_name,
            kms_key_id=resources.kms_key_arn,
            key_store_table_name=resources.key_store_table_name,
            endpoint_url=endpoint,
            temporal_address=address,
            automation_base_url=f"http://127.0.0.1:{server.server_address[1]}",
            automation_auth="dev:recorder",
        )
        svc = build_services(settings)
        owner = "recorder"
        ws = svc.access.create_workspace(owner, "replay", ShareType.SHARED)
        svc.access.set_ai(owner, ws, True)
        svc.policy.set(owner, ws, Mode.AUTO, 0)
        svc.document.save(owner, ws, "# Memory\n- recorded for replay\n", 0)
        conv = "conv-replay"
        turn_id = turn_id_for(conv, "record")
        session_id = f"sess-{uuid.uuid4().hex[:8]}"
        # The admission freezes the session: the turn's notes tools reach only that session's notebook.
        admitted = svc.admission.admit(
            conversation_id=conv,
            workspace_id=ws,
            user_id=owner,
            idempotency_key="record",
            session_id=session_id,
            turn_id=turn_id,
        )
        turn = TurnInput(
            turn_id=turn_id,
            conversation_id=conv,
            workspace_id=ws,
            user_id=owner,
            admission_id=admitted.admission.id,
            credential=admitted.credential,
            session_id=session_id,
            message=MESSAGE,
        )
        parts = dataclasses.replace(build_worker_parts(settings), converter=pydantic_data_converter)
        with worker_in_thread(settings, parts):
            history = asyncio.run(_run(settings, turn))
        OUT.write_text(history, encoding="utf-8")
        print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")
    finally:
        if server is not None:
            server.shutdown()
        stop(temporal)
        stop(moto)


async def _run(settings: Settings, turn: TurnInput) -> str:
    client = await Client.connect(settings.temporal_address, data_converter=pydantic_data_converter)
    handle = await client.start_workflow(
        WORKFLOW_NAME, turn, id=turn.turn_id, task_queue=settings.temporal_task_queue, result_type=TurnView
    )
    view = await handle.result()
    if view.status != "completed" or len(view.tool_outcomes) != 4 or not all(o.ok for o in view.tool_outcomes):
        raise RuntimeError(f"the recorded turn did not run every tool successfully: {view}")
    return (await handle.fetch_history()).to_json()


if __name__ == "__main__":
    main()
