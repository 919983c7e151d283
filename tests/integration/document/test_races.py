"""Races are decided by the transaction: real threads against the (serialized) moto server."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest
import requests

from tests.support import Api, new_user

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WRITERS = 20


def run_together(calls: list[Callable[[], requests.Response]]) -> list[requests.Response]:
    """Start every call at the same instant (a barrier), so they really overlap."""
    barrier = threading.Barrier(len(calls))

    def go(call: Callable[[], requests.Response]) -> requests.Response:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(go, calls))


def versions(api: Api, owner: str, ws: str) -> list[int]:
    body = api.call("GET", f"/v1/workspaces/{ws}/memory/versions?limit=100", user=owner).json()
    return [v["version"] for v in body["versions"]]


def test_twenty_concurrent_saves_on_one_base_have_exactly_one_winner(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "base", 0).status_code == 200
    results = run_together([partial(api.save, owner, ws, f"writer {i}", 1) for i in range(WRITERS)])
    statuses = Counter(r.status_code for r in results)
    assert statuses == {200: 1, 409: WRITERS - 1}
    winner = next(r for r in results if r.status_code == 200)
    assert winner.json()["version"] == 2
    assert all(r.json()["currentVersion"] == 2 for r in results if r.status_code == 409)
    assert versions(api, owner, ws) == [2, 1]
    assert api.read(owner, ws)["content"].startswith("writer ")


def test_clear_racing_saves_one_winner_and_generation_matches(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.save(owner, ws, "base", 0)

    def clear() -> requests.Response:
        return api.clear(owner, ws, 1)

    calls: list[Callable[[], requests.Response]] = [clear]
    calls += [partial(api.save, owner, ws, f"writer {i}", 1) for i in range(WRITERS - 1)]
    results = run_together(calls)
    assert Counter(r.status_code for r in results) == {200: 1, 409: WRITERS - 1}
    assert versions(api, owner, ws) == [2, 1]
    generation = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()["clearGeneration"]
    cleared = results[0].status_code == 200
    assert generation == (1 if cleared else 0)
    assert (api.read(owner, ws)["content"] == "") is cleared


def test_sequential_writers_after_races_leave_no_gap(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    for base in range(3):
        results = run_together([partial(api.save, owner, ws, f"w{i}", base) for i in range(5)])
        assert sum(r.status_code == 200 for r in results) == 1
    assert versions(api, owner, ws) == [3, 2, 1]
