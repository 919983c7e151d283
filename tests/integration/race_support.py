"""Real races, round after round: each round on tables of its own, two calls released together at a barrier."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scripts.localstack.resources import LocalResources, create_key_store_table, create_table
from tests.integration.fence_support import Scene, make_scene
from workspace_memory.adapters.aws import build_clients
from workspace_memory.kernel.errors import DomainError
from workspace_memory.kernel.settings import Settings


class Rounds:
    """Each round on a table of its own. moto deep-copies every table a transaction touches (for its
    rollback), so on one shared table 200 rounds would cost O(n^2) and say nothing more about the fence.
    The same holds for the branch-key store, which creating each round's workspace writes to."""

    def __init__(self, settings: Settings, resources: LocalResources) -> None:
        self._settings = settings
        self._endpoint = resources.endpoint_url
        self._clients = build_clients(settings)
        self._tables: list[str] = []

    def scene(self) -> Scene:
        """A fresh pair of tables; the previous round's are dropped first (moto keeps every table in memory)."""
        self.drop()
        name = f"wm-race-{uuid.uuid4().hex[:10]}"
        create_table(self._endpoint, name)
        create_key_store_table(self._endpoint, f"{name}-keys")
        self._tables = [name, f"{name}-keys"]
        update = {"table_name": name, "key_store_table_name": f"{name}-keys"}
        return make_scene(self._settings.model_copy(update=update), clients=self._clients)

    def drop(self) -> None:
        for table in self._tables:
            self._clients.dynamodb.delete_table(TableName=table)
        self._tables = []


def open_rounds(settings: Settings, resources: LocalResources) -> Iterator[Rounds]:
    """The body of a module's `rounds` fixture: the last round's tables are dropped at the end."""
    made = Rounds(settings, resources)
    yield made
    made.drop()


def race(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """Both calls in real threads, released together; a domain error is returned, not raised."""
    barrier = threading.Barrier(2)

    def run(fn: Callable[[], Any]) -> Any:
        barrier.wait()
        try:
            return fn()
        except DomainError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        a, b = pool.submit(run, first), pool.submit(run, second)
        return a.result(), b.result()
