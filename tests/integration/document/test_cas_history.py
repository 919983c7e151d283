"""Twelve clients read and save one document over HTTP at once; the whole history, 409s included, must be
linearizable (tests/linearizability.py).

Each client keeps the latest version it has heard of and mostly saves on it, sometimes on the one after it
(a base ahead of the head) or the one before it (a stale base); a 409's `currentVersion` is an observation
like a read's: "at this operation's point the version was N". Intervals are taken on one monotonic clock
around each request; nothing waits on time, and no time is asserted.
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.linearizability import Op, check
from tests.support import Api, new_user

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLIENTS = 12
OPS_PER_CLIENT = 40


def client_history(api: Api, user: str, ws: str, client: int, start: threading.Barrier) -> list[Op]:
    """One client's operations, in its own order; its choices come from a seeded generator, so every run makes
    the same mix (what the server answers still depends on the interleaving)."""
    rng = random.Random(client)
    known = 0
    ops: list[Op] = []
    start.wait()
    for n in range(OPS_PER_CLIENT):
        roll = rng.random()
        if roll < 0.25:
            began = time.perf_counter_ns()
            response = api.call("GET", f"/v1/workspaces/{ws}/memory", user=user)
            ended = time.perf_counter_ns()
            assert response.status_code == 200, response.text
            body = response.json()
            ops.append(Op(client, "read", began, ended, body["version"], content=body["content"]))
            known = max(known, body["version"])
            continue
        base = known + 1 if roll >= 0.9 else known - 1 if roll >= 0.85 and known > 0 else known
        content = f"client {client} op {n}"
        began = time.perf_counter_ns()
        response = api.save(user, ws, content, base)
        ended = time.perf_counter_ns()
        if response.status_code == 200:
            known = response.json()["version"]
            ops.append(Op(client, "save", began, ended, known, True, base, content))
            continue
        assert response.status_code == 409, response.text  # nothing else may happen to a save here
        assert response.json()["error"]["code"] == "STALE_BASE_VERSION", response.text
        current = response.json()["currentVersion"]
        ops.append(Op(client, "save", began, ended, current, False, base))
        known = max(known, current)
    return ops


def test_twelve_clients_reading_and_saving_one_document_make_a_linearizable_history(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    users = [owner] + [new_user(f"editor{n}") for n in range(1, CLIENTS)]
    for user in users[1:]:
        api.add_member(owner, ws, user, "editor")
    barrier = threading.Barrier(CLIENTS)
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        futures = [pool.submit(client_history, api, users[n], ws, n, barrier) for n in range(CLIENTS)]
        history = [op for future in futures for op in future.result()]
    began = time.perf_counter_ns()
    final = api.read(owner, ws)
    history.append(Op(-1, "read", began, time.perf_counter_ns(), final["version"], content=final["content"]))

    verdict = check(history, initial=0, initial_content="")

    print(
        f"\n{verdict.ops} operations: {verdict.saved} saves, {verdict.refused} 409s, "
        f"{verdict.observations} observations checked (reads and 409s)"
    )
    assert verdict.linearizable, "\n".join(verdict.problems[:10])
    assert verdict.ops == CLIENTS * OPS_PER_CLIENT + 1
    assert final["version"] == verdict.saved  # every 200 made one version; no 409 made any
    assert verdict.refused > 0
    assert any(not op.ok and op.base is not None and op.base > op.version for op in history)  # ahead of the head
