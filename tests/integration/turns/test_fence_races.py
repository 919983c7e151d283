"""Real races between a capture and a competing event, repeated: every outcome must match a serial order.

Threads start together at a barrier and hit the (serialized) moto server; the fence transaction alone
decides. Never may a capture commit above a Clear's empty version when its admission predates the Clear.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial

import pytest

from scripts.localstack.resources import LocalResources
from tests.depth import rounds as rounds_at_depth
from tests.integration.fence_support import DOC
from tests.integration.race_support import Rounds, open_rounds, race
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.errors import DomainError
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import CaptureResult, Outcome
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROUNDS = rounds_at_depth(200)  # 200 in `make soak` (tests/depth.py)


@pytest.fixture(scope="module")
def rounds(settings: Settings, resources: LocalResources) -> Iterator[Rounds]:
    yield from open_rounds(settings, resources)


def test_capture_races_clear(rounds: Rounds) -> None:
    tally: Counter[str] = Counter()
    for n in range(ROUNDS):
        scene = rounds.scene()
        admitted = scene.admit()
        line = f"- fact {n}"
        captured, cleared = race(
            partial(scene.capture, admitted, line, 1),
            partial(scene.svc.document.clear, scene.owner, scene.ws, 1),
        )
        assert isinstance(captured, CaptureResult), captured
        history = [v.op for v in scene.svc.document.history(scene.owner, scene.ws, 5, None).versions]
        generation = scene.svc.policy.get(scene.owner, scene.ws).clear_generation
        if captured.outcome is Outcome.COMMITTED:
            # Serial order: the capture, then a Clear on a stale base that wrote nothing.
            assert isinstance(cleared, DomainError)
            assert cleared.code == "STALE_BASE_VERSION"
            assert (history, generation) == (["capture", "save"], 0)
            assert scene.head() == (2, DOC + line + "\n")
            tally["capture first"] += 1
        else:
            # Serial order: the Clear, then a capture the fence refused. Never a capture above the empty
            # version while its admission predates the Clear.
            assert not isinstance(cleared, DomainError), cleared
            assert captured.outcome in (Outcome.REFUSED, Outcome.CONFLICT)
            assert captured.predicate in (Predicate.POLICY, Predicate.HEAD)
            assert (history, generation) == (["clear", "save"], 1)
            assert scene.head() == (2, "")
            tally["clear first"] += 1
    assert sum(tally.values()) == ROUNDS


@pytest.mark.parametrize("target", [Mode.READ_ONLY, Mode.AUTO])
def test_capture_races_mode_change(rounds: Rounds, target: Mode) -> None:
    for n in range(ROUNDS):
        scene = rounds.scene()
        admitted = scene.admit()
        captured, changed = race(
            partial(scene.capture, admitted, f"- fact {n}", 1),
            partial(scene.svc.policy.set, scene.owner, scene.ws, target, 1),
        )
        assert not isinstance(changed, DomainError), changed  # nothing else changes the policy
        assert isinstance(captured, CaptureResult), captured
        if captured.outcome is Outcome.COMMITTED:
            assert scene.head()[0] == 2  # serial order: capture, then the mode change
        else:
            assert (captured.outcome, captured.predicate) == (Outcome.REFUSED, Predicate.POLICY)
            assert scene.head() == (1, DOC)


def test_capture_races_key_session_revocation(rounds: Rounds) -> None:
    for n in range(ROUNDS):
        scene = rounds.scene()
        session = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES)
        admitted = scene.admit(key_session=session.id)
        captured, revoked = race(
            partial(scene.capture, admitted, f"- fact {n}", 1),
            partial(scene.svc.key_sessions.revoke, scene.owner, scene.ws, session.id),
        )
        assert not isinstance(revoked, DomainError), revoked
        assert isinstance(captured, CaptureResult), captured
        if captured.outcome is Outcome.COMMITTED:
            assert scene.head()[0] == 2  # serial order: capture, then the revocation
        else:
            assert (captured.outcome, captured.predicate) == (Outcome.REFUSED, Predicate.KEY_SESSION)
            assert scene.head() == (1, DOC)
