"""The worker: registers the turn, workspace-deletion, member-erasure, export and import workflows and their activities
on the task queue.

`python -m workflows.worker` runs it as a long-lived process (the local stack, any host); the Lambda
worker (`workflows/lambda_worker.py`) builds the same pieces through `build_worker_parts`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from types import MethodType
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker, WorkerConfig

from workflows.activities import TOOL_ACTIVITIES, TurnActivities
from workflows.automation import Auth, AutomationApi, DevAuth, SigV4Auth
from workflows.consolidation_activities import ConsolidationActivities
from workflows.consolidation_workflow import WorkspaceConsolidationWorkflow
from workflows.deletion_activities import DeletionActivities
from workflows.deletion_workflow import WorkspaceDeletionWorkflow
from workflows.erasure_activities import ErasureActivities
from workflows.erasure_workflow import MemberErasureWorkflow
from workflows.export_activities import ExportActivities
from workflows.export_workflow import WorkspaceExportWorkflow
from workflows.history_activities import delete_turn_histories
from workflows.import_activities import ImportActivities
from workflows.import_workflow import WorkspaceImportWorkflow
from workflows.liveness import with_liveness
from workflows.providers import ModelProvider, build_provider
from workflows.turn_workflow import AgentTurnWorkflow
from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.temporal_codec import data_converter, payload_cipher
from workspace_memory.kernel.settings import Settings


@dataclass(frozen=True)
class WorkerParts:
    activities: TurnActivities
    converter: Any
    deletion: DeletionActivities | None = None
    erasure: ErasureActivities | None = None
    export: ExportActivities | None = None
    imports: ImportActivities | None = None
    consolidation: ConsolidationActivities | None = None


def automation_auth(settings: Settings) -> Auth:
    scheme, _, name = settings.automation_auth.partition(":")
    if scheme == "dev" and name:
        return DevAuth(name)
    if scheme == "iam":
        return SigV4Auth(settings.region)
    raise ValueError("AUTOMATION_AUTH must be 'iam' or 'dev:<name>'")


def build_worker_parts(settings: Settings, provider: ModelProvider | None = None) -> WorkerParts:
    if not settings.automation_base_url:
        raise ValueError("AUTOMATION_BASE_URL is required")
    clients = build_clients(settings)
    api = AutomationApi(settings.automation_base_url, automation_auth(settings))
    model = provider or build_provider(settings)
    return WorkerParts(
        activities=TurnActivities(api, model),
        deletion=DeletionActivities(api),
        erasure=ErasureActivities(api),
        export=ExportActivities(api),
        imports=ImportActivities(api),
        consolidation=ConsolidationActivities(api, model),
        converter=data_converter(payload_cipher(clients.kms, settings.kms_key_id)),
    )


def activities_of(parts: WorkerParts) -> list[Any]:
    """Every activity a turn executes, bound to the parts' instance: the model round, then each tool's; and
    the workspace deletion's steps, and the member erasure's."""
    a = parts.activities
    turn = [a.model_round, *(MethodType(run, a) for run in TOOL_ACTIVITIES.values())]
    d, r, e = parts.deletion, parts.erasure, parts.export
    deletion = [] if d is None else [d.destroy_branch_key, d.purge_batch]
    erasure = [] if r is None else [r.erasure_step]
    export = [] if e is None else [e.write_export_file, e.finish_export]
    i = parts.imports
    imports = [] if i is None else [i.apply_import_file, i.finish_import]
    histories = [] if d is None and r is None else [delete_turn_histories]
    c = parts.consolidation
    consolidation = (
        [] if c is None else [c.consolidation_pairs, c.judge_pair, c.propose_consolidation, c.finish_consolidation_run]
    )
    return [*turn, *deletion, *histories, *erasure, *export, *imports, *consolidation]


WORKFLOWS = [
    AgentTurnWorkflow,
    WorkspaceDeletionWorkflow,
    MemberErasureWorkflow,
    WorkspaceExportWorkflow,
    WorkspaceImportWorkflow,
    WorkspaceConsolidationWorkflow,
]
"""Every workflow the worker runs (the long-running worker and the Lambda worker alike)."""


def build_worker(client: Client, settings: Settings, parts: WorkerParts, executor: ThreadPoolExecutor) -> Worker:
    config = WorkerConfig(
        client=client,
        task_queue=settings.temporal_task_queue,
        workflows=WORKFLOWS,
        activities=activities_of(parts),
        activity_executor=executor,
        max_concurrent_activities=8,
    )
    return Worker(**with_liveness(config))


async def serve(settings: Settings, parts: WorkerParts) -> None:
    client = await Client.connect(
        settings.temporal_address, namespace=settings.temporal_namespace, data_converter=parts.converter
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    with ThreadPoolExecutor(max_workers=8) as executor:
        worker = build_worker(client, settings, parts, executor)
        async with worker:
            print("WORKER READY", flush=True)
            await stop.wait()


@contextmanager
def worker_in_thread(settings: Settings, parts: WorkerParts) -> Iterator[None]:
    """The same worker on its own event loop in a daemon thread, polling until the block exits (tests,
    benchmarks and tools that run turns in-process)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()
    failure: list[BaseException] = []

    async def poll() -> None:
        client = await Client.connect(
            settings.temporal_address, namespace=settings.temporal_namespace, data_converter=parts.converter
        )
        with ThreadPoolExecutor(max_workers=8) as executor:
            async with build_worker(client, settings, parts, executor):
                ready.set()
                await stop.wait()

    def main() -> None:
        try:
            loop.run_until_complete(poll())
        except BaseException as exc:
            failure.append(exc)
            ready.set()

    thread = threading.Thread(target=main, name="turn-worker", daemon=True)
    thread.start()
    ready.wait(timeout=60)
    if failure:
        raise failure[0]
    try:
        yield
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)


def main() -> None:
    settings = Settings.from_environ(os.environ)
    asyncio.run(serve(settings, build_worker_parts(settings)))


if __name__ == "__main__":
    main()
