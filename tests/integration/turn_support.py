"""A real turn worker in a background thread, and helpers to run turns against the live stack."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from temporalio.client import Client

from workflows.providers import ModelProvider
from workflows.worker import WorkerParts, build_worker, build_worker_parts
from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.ports import Cipher
from workspace_memory.settings import Settings

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
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()
    failure: list[BaseException] = []

    async def serve() -> None:
        client = await Client.connect(settings.temporal_address, data_converter=parts.converter)
        with ThreadPoolExecutor(max_workers=8) as executor:
            async with build_worker(client, settings, parts, executor):
                ready.set()
                await stop.wait()

    def main() -> None:
        try:
            loop.run_until_complete(serve())
        except BaseException as exc:
            failure.append(exc)
            ready.set()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    ready.wait(timeout=60)
    if failure:
        raise failure[0]
    try:
        yield parts
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def codec_client(settings: Settings, cipher: Cipher) -> Client:
    return await Client.connect(settings.temporal_address, data_converter=data_converter(cipher))


async def plain_client(settings: Settings) -> Client:
    """No codec: sees exactly what the Temporal server stores."""
    return await Client.connect(settings.temporal_address)
