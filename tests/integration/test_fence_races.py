"""Real races between a capture and a competing event, repeated: every outcome must match a serial order.

Threads start together at a barrier and hit the (serialized) moto server; the fence transaction alone
decides. Never may a capture commit above a Clear's empty version when its admission predates the Clear.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from tests.integration.fence_support import Scene, make_scene
from workspace_memory.authority import Predicate
from workspace_memory.capture import CaptureResult, Outcome
from workspace_memory.errors import DomainError
from workspace_memory.policy import Mode
from workspace_memory.settings import Settings

pytestmark = pytest.mark.integration

ROUNDS = 200


def race(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
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


def test_capture_races_clear(settings: Settings) -> None:
    scene = make_scene(settings)
    tally: Counter[str] = Counter()
    for n in range(ROUNDS):
        version, _ = scene.head()
        admitted = scene.admit()
        line = f"- fact {n}"
        captured, cleared = race(
            partial(scene.capture, admitted, line, version),
            partial(scene.svc.document.clear, scene.owner, scene.ws, version),
        )
        assert isinstance(captured, CaptureResult), captured
        history = scene.svc.document.history(scene.owner, scene.ws, 3, None).versions
        if captured.outcome is Outcome.COMMITTED:
            # Serial order: capture, then a Clear on a stale base that wrote nothing.
            assert isinstance(cleared, DomainError)
            assert cleared.code == "STALE_BASE_VERSION"
            assert [v.op for v in history[:1]] == ["capture"]
            assert scene.head() == (version + 1, _with_line(scene, version, line))
            tally["capture first"] += 1
        else:
            # Serial order: Clear, then a capture refused by the fence; the empty version is the head.
            assert not isinstance(cleared, DomainError), cleared
            assert captured.outcome in (Outcome.REFUSED, Outcome.CONFLICT)
            assert captured.predicate in (Predicate.POLICY, Predicate.HEAD)
            assert [v.op for v in history[:1]] == ["clear"]
            assert scene.head() == (version + 1, "")
            tally["clear first"] += 1
        assert [v.version for v in history] == list(range(version + 1, max(0, version - 2), -1))
    assert sum(tally.values()) == ROUNDS


def _with_line(scene: Scene, version: int, line: str) -> str:
    _, previous = scene.svc.document.read_version(scene.owner, scene.ws, version)
    return previous + line + "\n"


@pytest.mark.parametrize("target", [Mode.READ_ONLY, Mode.AUTO])
def test_capture_races_mode_change(settings: Settings, target: Mode) -> None:
    scene = make_scene(settings)
    for n in range(ROUNDS // 2):
        scene.set_mode(Mode.AUTO)
        version, _ = scene.head()
        admitted = scene.admit()
        revision = scene.svc.policy.get(scene.owner, scene.ws).revision
        captured, changed = race(
            partial(scene.capture, admitted, f"- fact {n}", version),
            partial(scene.svc.policy.set, scene.owner, scene.ws, target, revision),
        )
        assert not isinstance(changed, DomainError), changed  # nothing else changes the policy
        assert isinstance(captured, CaptureResult), captured
        if captured.outcome is Outcome.COMMITTED:
            assert scene.head()[0] == version + 1
        else:
            assert (captured.outcome, captured.predicate) == (Outcome.REFUSED, Predicate.POLICY)
            assert scene.head()[0] == version


def test_capture_races_key_session_revocation(settings: Settings) -> None:
    scene = make_scene(settings)
    for n in range(ROUNDS):
        session = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600)
        version, _ = scene.head()
        admitted = scene.admit(key_session=session.id)
        captured, _revoked = race(
            partial(scene.capture, admitted, f"- fact {n}", version),
            partial(scene.svc.key_sessions.revoke, scene.owner, scene.ws, session.id),
        )
        assert isinstance(captured, CaptureResult), captured
        if captured.outcome is Outcome.COMMITTED:
            assert scene.head()[0] == version + 1
        else:
            assert (captured.outcome, captured.predicate) == (Outcome.REFUSED, Predicate.KEY_SESSION)
            assert scene.head()[0] == version
