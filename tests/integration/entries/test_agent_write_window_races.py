"""Real concurrency on one key session's write window, against the (serialized) moto server: writers released
together at a barrier over a full window of writes an hour old each try to remove the same aged-out writes and
add their own. Exactly as many commit as the limit allows, the others answer `RATE_LIMITED`, and the window
ends holding exactly the writes that committed (docs/decisions/0075)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.integration.entries.test_entry_fence_matrix import EDITOR, _admit, _scene, save
from workspace_memory.entries.limits import HOUR, OWN_TURNS
from workspace_memory.kernel.errors import RateLimited
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import Outcome
from workspace_memory.store import keys

pytestmark = pytest.mark.integration

LIMIT = 4
WRITERS = 8


def test_writers_racing_over_aged_out_writes_admit_exactly_the_room(settings: Settings) -> None:
    scene = _scene(settings)
    scene.svc.entries.limits.agent_writes_per_hour = LIMIT  # the mechanism, at a size a test can reach
    try:
        first = _admit(scene)
        for n in range(LIMIT):
            assert save(scene, first, idem=f"old-{n}", title=f"Old {n}").outcome is Outcome.COMMITTED
        scene.clock.advance(HOUR)  # every write of the window is now an hour old; the admission too
        admitted = _admit(scene)
        gate = threading.Barrier(WRITERS)
        answers: list[Any] = [None] * WRITERS

        def write(n: int) -> None:
            gate.wait()
            try:
                answers[n] = save(scene, admitted, idem=f"new-{n}", title=f"New {n}").outcome
            except Exception as exc:  # RATE_LIMITED is expected; anything else fails the count below
                answers[n] = exc

        threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        committed = [a for a in answers if a is Outcome.COMMITTED]
        limited = [a for a in answers if isinstance(a, RateLimited)]
        assert (len(committed), len(limited)) == (LIMIT, WRITERS - LIMIT), answers
        window = scene.svc.table.get(*keys.agent_rate(scene.ws, EDITOR, OWN_TURNS))
        assert window is not None
        now_ms = int(scene.clock.now() * 1000)
        assert sorted(window["window"].values()) == [now_ms] * LIMIT  # the old writes gone, the new ones counted
    finally:
        scene.svc.entries.limits.agent_writes_per_hour = 120
