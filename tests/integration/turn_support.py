"""A real turn worker in a background thread, and helpers to run turns against the live stack."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from temporalio.client import Client

from tests.integration.fence_support import Scene
from workflows.providers import ModelProvider
from workflows.worker import WorkerParts, build_worker_parts, worker_in_thread
from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.adapters.temporal_turns import TemporalTurns
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.ports import Cipher
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.service import TurnService
from workspace_memory.turns.turn_contract import TurnView

T = TypeVar("T")


def worker_settings(settings: Settings, gateway_url: str, task_queue: str | None = None) -> Settings:
    return settings.model_copy(
        update={
            "automation_base_url": gateway_url,
            "automation_auth": "dev:worker",
            "temporal_task_queue": task_queue or settings.temporal_task_queue,
        }
    )


@contextmanager
def running_worker(settings: Settings, provider: ModelProvider | None = None) -> Iterator[WorkerParts]:
    """The production worker (same workflow, activities, codec), polling until the block exits."""
    parts = build_worker_parts(settings, provider)
    with worker_in_thread(settings, parts):
        yield parts


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def codec_client(settings: Settings, cipher: Cipher) -> Client:
    return await Client.connect(settings.temporal_address, data_converter=data_converter(cipher))


async def plain_client(settings: Settings) -> Client:
    """No codec: sees exactly what the Temporal server stores."""
    return await Client.connect(settings.temporal_address)


def queued_turns(scene: Scene, settings: Settings, queue: str) -> TurnService:
    """Ingress onto a queue no worker polls yet: the turn is admitted and waits, so events can land first."""
    runner = TemporalTurns(settings.model_copy(update={"temporal_task_queue": queue}), scene.svc.cipher)
    return TurnService(scene.svc.table, scene.svc.admission, runner)


def result(settings: Settings, scene: Scene, turn_id: str) -> TurnView:
    return turn_result(settings, scene.svc.cipher, turn_id)


def turn_result(settings: Settings, cipher: Cipher, turn_id: str) -> TurnView:
    """Waits for the turn's workflow to finish (a Temporal long poll, not a sleep) and returns its view."""

    async def wait() -> TurnView:
        client = await codec_client(settings, cipher)
        view: TurnView = await client.get_workflow_handle(turn_id, result_type=TurnView).result()
        return view

    return run(wait())


def start_queued(
    scene: Scene,
    settings: Settings,
    queue: str,
    message: str,
    *,
    session_id: str | None = None,
    key_session_id: str | None = None,
) -> tuple[str, str]:
    """Admits and starts a turn on `queue` for a fresh conversation; returns (conversation, turn id)."""
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    request = AdmissionRequest(
        conversation_id=conv,
        workspace_id=scene.ws,
        user_id=scene.owner,
        idempotency_key="k",
        key_session_id=key_session_id,
        session_id=session_id,
        message=message,
    )
    started = queued_turns(scene, settings, queue).start(request)
    return conv, started.turn_id
