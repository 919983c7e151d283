"""Real races between an agent's entry save (`save_memory`) and a Clear or a mode change, repeated: every
round must come out as one of the two serial orders (issue 10, docs/architecture.md#the-fence).

Each round: a fresh workspace in `auto` with AI on, an admission under a key session, then the save and the
competing event released together at a barrier in real threads against the (serialized) moto server; only
the fence transaction decides. Judged per round from what is stored, and from the order the two writes
reached the server: either the save committed (its entry is there, authored by the agent, and the event
landed after it), or it was refused with `policy` and nothing of it was written. Never an entry committed
after the event it was admitted before.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.depth import rounds as rounds_at_depth
from tests.integration.fence_support import DOC, Scene
from tests.integration.race_support import Rounds, open_rounds, race
from workspace_memory.document.policy import Mode, Policy
from workspace_memory.entries.agent_results import SaveResult
from workspace_memory.entries.model import Draft, EntryText, Filters
from workspace_memory.kernel.errors import DomainError
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType, Outcome
from workspace_memory.store import keys
from workspace_memory.store.changes import Change, PolicyIs
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.authority import Predicate
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROUNDS = rounds_at_depth(200)  # 200 in `make soak` (tests/depth.py)
MAX_ROUNDS = 3 * ROUNDS
"""A busy machine can let one side win every round of a short run: rounds go on (at most three times as many,
each checking the invariant) until both orders were seen, so the verdict never rests on one schedule."""
ORDERS = ("save first", "event first")
PLACES = {False: "at start", True: "at the writes"}
TITLE = "Reply style"
KEY = "style/replies"
COUNTER = keys.entry_counter("-")[1]
SECRET = keys.entry_secret("-")[1]
"""The workspace's HMAC secret for entry keys, made at its first keyed write (before the fence: it is the
workspace's, holds no memory and no trace of the save), so a refused save may leave it behind."""


@pytest.fixture(scope="module")
def rounds(settings: Settings, resources: LocalResources) -> Iterator[Rounds]:
    yield from open_rounds(settings, resources)


@dataclass(frozen=True)
class Call:
    role: str
    start: int
    end: int
    ok: bool
    fence: bool = False
    """The save's fence: the transaction that re-checks the policy (the answer's write comes after it)."""


@dataclass
class Timeline:
    """When each side's calls reached the server and came back (one monotonic clock for both threads)."""

    gate: threading.Barrier | None = None
    """When set, the save's fence transaction and the event's write wait for each other here and go to the
    server together: the race is then decided by the transactions alone, not by who reads faster."""
    calls: list[Call] = field(default_factory=list)
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)

    def wrap(self, transact: Callable[[Sequence[Change]], None]) -> Callable[[Sequence[Change]], None]:
        def timed(changes: Sequence[Change]) -> None:
            role = getattr(self._local, "role", "setup")
            fence = role == "save" and any(isinstance(c, PolicyIs) for c in changes)
            if self.gate is not None and (fence or role == "event"):
                self.gate.wait()
            start, ok = time.perf_counter_ns(), False
            try:
                transact(changes)
                ok = True
            finally:
                self.calls.append(Call(role, start, time.perf_counter_ns(), ok, fence))

        return timed

    def side(self, role: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            self._local.role = role
            start = time.perf_counter_ns()
            try:
                return fn()
            finally:
                self.spans[role] = (start, time.perf_counter_ns())

        return run

    def last_write(self, role: str) -> Call | None:
        """The side's last transaction (the event's own write)."""
        return next((c for c in reversed(self.calls) if c.role == role), None)

    def fence(self) -> Call | None:
        """The save's fence transaction (its recorded answer is written by another one, after it)."""
        return next((c for c in reversed(self.calls) if c.fence), None)


@dataclass(frozen=True)
class Event:
    name: str
    land: Callable[[Scene], object]
    landed: Callable[[Scene], None]
    """Asserts the event is stored (it always lands: the save writes nothing it conditions on)."""


def _cleared(scene: Scene) -> None:
    assert _policy(scene) == Policy(Mode.AUTO, 1, 1)
    assert scene.head() == (2, "")


def _mode_set(target: Mode) -> Callable[[Scene], None]:
    def landed(scene: Scene) -> None:
        assert _policy(scene) == Policy(target, 2, 0)
        assert scene.head() == (1, DOC)

    return landed


EVENTS = [
    Event("clear", lambda s: s.svc.document.clear(s.owner, s.ws, 1), _cleared),
    Event("mode read_only", lambda s: s.svc.policy.set(s.owner, s.ws, Mode.READ_ONLY, 1), _mode_set(Mode.READ_ONLY)),
    Event("mode off", lambda s: s.svc.policy.set(s.owner, s.ws, Mode.OFF, 1), _mode_set(Mode.OFF)),
]


def _policy(scene: Scene) -> Policy:
    return scene.svc.policy.get(scene.owner, scene.ws)


def _save(scene: Scene, admitted: Admitted, n: int) -> SaveResult:
    text = EntryText(TITLE, f"Short replies, round {n}.", "Body of the entry.", (), KEY)
    body: dict[str, Any] = {"type": "fact", "title": TITLE, "key": KEY, "scope": "workspace", "n": n}
    adm = admitted.admission
    draft = Draft(EntryType.FACT, text, EntryScope.WORKSPACE)
    return scene.svc.agent_entries.save(scene.ws, adm.id, admitted.credential, draft, None, body, f"save-{n}")


def _entry_items(scene: Scene) -> dict[str, dict[str, Any]]:
    """Every entry item of the workspace by sort key: heads, revisions, key slots, candidates, idempotency
    markers, the agent rate and the version counter (`ENTRIES`)."""
    items = scene.svc.table.query(keys.ws(scene.ws), "ENTR", limit=1000, newest_first=False)
    return {item["sk"]: item for item in items if item["sk"] != SECRET}


def _kinds(sort_keys: set[str]) -> list[str]:
    return sorted(sk.split("#")[0] for sk in sort_keys)


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_save_races_event(rounds: Rounds, event: Event, monkeypatch: pytest.MonkeyPatch) -> None:
    tally: Counter[str] = Counter()
    for n in range(MAX_ROUNDS):
        seen = {order for order in ORDERS if any(k.startswith(order) for k in tally)}
        if n >= ROUNDS and seen == set(ORDERS):
            break
        scene = rounds.scene()
        session = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES)
        admitted = scene.admit(key_session=session.id)
        before = _entry_items(scene)
        # Released together at the start (the event usually lands before the save's snapshot: refused
        # there), or - every other round - at the two writes (the fence transaction alone decides).
        gated = n % 2 == 1
        timeline = Timeline(gate=threading.Barrier(2, timeout=60) if gated else None)
        monkeypatch.setattr(scene.svc.table, "transact", timeline.wrap(scene.svc.table.transact))

        saved, landed = race(
            timeline.side("save", partial(_save, scene, admitted, n)),
            timeline.side("event", partial(event.land, scene)),
        )

        assert not isinstance(landed, DomainError), landed
        assert isinstance(saved, SaveResult), saved
        event.landed(scene)
        after = _entry_items(scene)
        write = timeline.last_write("event")
        assert write is not None
        assert write.ok
        no_candidates = scene.svc.entries.candidates(scene.owner, scene.ws, 10, None)[0] == []
        if saved.outcome is Outcome.COMMITTED:
            # Serial order: the save, then the event. Its fence reached the server before the event's write
            # had come back, and everything of the entry is stored, the idempotency answer included.
            fence = timeline.fence()
            assert fence is not None
            assert fence.ok
            assert fence.start < write.end, "an entry committed after the event it was admitted before"
            assert (saved.revision, saved.candidate_id, saved.predicate) == (1, None, None)
            assert saved.entry_id is not None
            view = scene.svc.entries.read(scene.owner, scene.ws, saved.entry_id)
            assert (view.author, view.author_kind, view.status) == (scene.owner, "agent", EntryStatus.ACTIVE)
            assert (view.text.title, view.text.key) == (TITLE, KEY)
            new = set(after) - set(before)
            assert _kinds(new) == ["ENTRIES", "ENTRY", "ENTRYKEY", "ENTRYRATE", "ENTRYREV", "ENTRYSAVE"], sorted(new)
            assert after[COUNTER]["versions"] == 1
            marker = next(after[sk] for sk in new if sk.startswith("ENTRYSAVE#"))
            assert marker["answer"]["entryId"] == saved.entry_id
            assert marker["answer"]["outcome"] == Outcome.COMMITTED.value
            assert no_candidates
            tally[f"save first ({PLACES[gated]})"] += 1
        else:
            # Serial order: the event, then a save the fence refused, naming the event's predicate. The
            # event's write had reached the server before the save came back, and nothing of the save is stored.
            assert (saved.outcome, saved.predicate) == (Outcome.REFUSED, Predicate.POLICY), saved
            assert (saved.entry_id, saved.revision, saved.candidate_id) == (None, None, None)
            assert write.start < timeline.spans["save"][1]
            assert after == before
            assert no_candidates
            assert scene.svc.entries.list_entries(scene.owner, scene.ws, Filters(), 10, None).rows == []
            tally[f"event first ({PLACES[gated]})"] += 1
    print(f"\n{event.name}: {dict(tally)}")
    assert ROUNDS <= sum(tally.values()) <= MAX_ROUNDS
    orders = Counter({order: sum(v for k, v in tally.items() if k.startswith(order)) for order in ORDERS})
    assert orders["save first"] > 0, tally  # a race that never interleaves tests nothing
    assert orders["event first"] > 0, tally
