"""The audit trail by construction: every change type and item kind is an action or bookkeeping; a landed
transaction carries exactly one event, a refused one none; the reader's visibility, filters and paging. Over
the in-memory table, with the real services."""

from __future__ import annotations

import copy
from types import UnionType
from typing import get_args

import pytest

from tests.memory_table import MemoryKeyStore, MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.document.policy import PolicyService
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.entries.service import EntryService
from workspace_memory.governance.audit import MAX_SCANNED, AuditService
from workspace_memory.governance.audit_query import AuditQuery
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.kernel.errors import Forbidden, InvalidInput, StaleRevision, WorkspaceNotFound
from workspace_memory.kernel.terms import ActorKind, AuditKind, EntryScope, EntryType, Mode, Role, ShareType
from workspace_memory.store import changes as ch
from workspace_memory.store import keys
from workspace_memory.store.audit_items import ITEM_BOOKKEEPING, ITEM_TARGETS
from workspace_memory.store.audit_records import AuditRecord
from workspace_memory.store.audit_trail import BOOKKEEPING, VERB_TARGETS, AuditedTable
from workspace_memory.store.changes.base import ItemWrite
from workspace_memory.store.feed_images import RULES
from workspace_memory.workspaces.access import AccessService

pytestmark = pytest.mark.unit

OWNER, EDITOR, VIEWER = "olivia", "eddie", "vera"


def test_every_change_type_is_an_action_or_bookkeeping() -> None:
    union = ch.Change
    assert isinstance(union, UnionType)
    unclassified = [
        t.__name__
        for t in get_args(union)
        if not issubclass(t, ItemWrite) and t not in VERB_TARGETS and t not in BOOKKEEPING
    ]
    assert unclassified == []
    assert not set(VERB_TARGETS) & BOOKKEEPING


def test_every_item_kind_is_an_action_or_bookkeeping() -> None:
    kinds = {rule.kind for rule in RULES}
    assert kinds - set(ITEM_TARGETS) - ITEM_BOOKKEEPING == set()
    assert not set(ITEM_TARGETS) & ITEM_BOOKKEEPING


class World:
    def __init__(self) -> None:
        self.raw = MemoryTable()
        self.clock = ManualClock(1_800_000_000.0)
        table = AuditedTable(self.raw, self.clock)
        store = MemoryKeyStore()
        cipher = FakeCipher(store)
        self.access = AccessService(table, self.clock, store, cipher)
        self.entries = EntryService(table, cipher, self.clock)
        self.policy = PolicyService(table, self.clock)
        self.audit = AuditService(table, self.clock)
        self.ws = self.access.create_workspace(OWNER, "w", ShareType.SHARED)
        self.tick()
        self.access.put_member(OWNER, self.ws, EDITOR, Role.EDITOR)
        self.tick()
        self.access.put_member(OWNER, self.ws, VIEWER, Role.VIEWER)
        self.tick()

    def events(self) -> list[AuditRecord]:
        items = [item for key, item in self.raw.items.items() if key[1].startswith(keys.AUDIT_PREFIX)]
        return sorted((AuditRecord.from_item(item) for item in items), key=lambda r: (r.at_ms, r.tail))

    def tick(self) -> None:
        self.clock.advance(1)


def _draft(summary: str = "deploy day") -> Draft:
    return Draft(EntryType.FACT, EntryText("Deploys", summary, "We deploy on Fridays.", (), None), EntryScope.WORKSPACE)


def test_each_landed_write_carries_one_event_with_its_actor_and_ids() -> None:
    w = World()
    w.tick()
    written = w.entries.create(EDITOR, w.ws, _draft())
    w.tick()
    w.entries.supersede(EDITOR, w.ws, written.entry_id, _draft("tuesdays"), 1)
    w.tick()
    w.policy.set(OWNER, w.ws, Mode.AUTO, 0)

    told = [(e.kind, e.op, e.actor, e.actor_kind, [(t.kind, t.id, t.version) for t in e.targets]) for e in w.events()]
    assert told == [
        (
            AuditKind.WORKSPACE,
            "created",
            OWNER,
            ActorKind.PERSON,
            [(AuditKind.WORKSPACE, w.ws, None), (AuditKind.MEMBER, OWNER, None)],
        ),
        (AuditKind.MEMBER, "editor", OWNER, ActorKind.PERSON, [(AuditKind.MEMBER, EDITOR, None)]),
        (AuditKind.MEMBER, "viewer", OWNER, ActorKind.PERSON, [(AuditKind.MEMBER, VIEWER, None)]),
        (AuditKind.ENTRY, "created", EDITOR, ActorKind.PERSON, [(AuditKind.ENTRY, written.entry_id, 1)]),
        (AuditKind.ENTRY, "revised", EDITOR, ActorKind.PERSON, [(AuditKind.ENTRY, written.entry_id, 2)]),
        (AuditKind.POLICY, "auto", OWNER, ActorKind.PERSON, [(AuditKind.POLICY, w.ws, 1)]),
    ]


def test_a_refused_write_leaves_no_event_and_bookkeeping_leaves_none() -> None:
    w = World()
    written = w.entries.create(EDITOR, w.ws, _draft())
    before = copy.deepcopy(w.raw.items)
    with pytest.raises(StaleRevision):
        w.entries.supersede(EDITOR, w.ws, written.entry_id, _draft("late"), 7)
    assert w.raw.items == before
    w.entries.read(VIEWER, w.ws, written.entry_id)  # counts a read: bookkeeping, no event
    assert [e.op for e in w.events()] == ["created", "editor", "viewer", "created"]


def _ops(page_events: list[AuditRecord]) -> list[tuple[str, str | None]]:
    return [(e.op, e.actor) for e in page_events]


def test_the_owner_reads_everyone_newest_first_and_a_member_only_themself() -> None:
    w = World()
    w.tick()
    w.entries.create(EDITOR, w.ws, _draft())
    w.tick()
    w.policy.set(OWNER, w.ws, Mode.AUTO, 0)

    owner = w.audit.list(OWNER, w.ws, AuditQuery())
    assert _ops(owner.events)[:2] == [("auto", OWNER), ("created", EDITOR)]
    assert owner.next_cursor is None
    mine = w.audit.list(EDITOR, w.ws, AuditQuery())
    assert _ops(mine.events) == [("created", EDITOR)]
    assert w.audit.list(VIEWER, w.ws, AuditQuery()).events == []
    with pytest.raises(Forbidden):
        w.audit.list(EDITOR, w.ws, AuditQuery(actor=OWNER))
    with pytest.raises(WorkspaceNotFound):
        w.audit.list("stranger", w.ws, AuditQuery())


def test_filters_by_time_actor_and_kind_and_pages_resume_after_the_last() -> None:
    w = World()
    start = w.clock.now()
    for n in range(5):
        w.tick()
        w.entries.create(EDITOR, w.ws, _draft(f"n{n}"))
    w.tick()
    w.policy.set(OWNER, w.ws, Mode.AUTO, 0)

    entries = w.audit.list(OWNER, w.ws, AuditQuery(kind=AuditKind.ENTRY))
    assert len(entries.events) == 5
    window = w.audit.list(OWNER, w.ws, AuditQuery(since=start + 2, until=start + 4))
    assert [e.at_ms for e in window.events] == [int((start + t) * 1000) for t in (4, 3, 2)]
    assert [e.actor for e in w.audit.list(OWNER, w.ws, AuditQuery(actor=OWNER)).events].count(EDITOR) == 0

    seen: list[int] = []
    cursor = None
    while True:
        page = w.audit.list(OWNER, w.ws, AuditQuery(kind=AuditKind.ENTRY, limit=2, cursor=cursor))
        seen += [e.at_ms for e in page.events]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True)
    assert len(seen) == len(set(seen)) == 5


@pytest.mark.parametrize(
    "query",
    [AuditQuery(limit=0), AuditQuery(limit=101), AuditQuery(since=10.0, until=5.0), AuditQuery(cursor="nope")],
)
def test_bad_queries_are_refused(query: AuditQuery) -> None:
    w = World()
    before = copy.deepcopy(w.raw.items)
    with pytest.raises(InvalidInput):
        w.audit.list(OWNER, w.ws, query)
    assert w.raw.items == before


def test_a_call_reads_a_bounded_number_of_events_and_says_where_to_resume() -> None:
    w = World()
    for revision in range(MAX_SCANNED + 10):
        w.tick()
        w.policy.set(OWNER, w.ws, Mode.AUTO if revision % 2 == 0 else Mode.READ_ONLY, revision)
    first = w.audit.list(OWNER, w.ws, AuditQuery(kind=AuditKind.WORKSPACE))
    assert first.events == []  # 500 policy events read, none of the kind asked for
    assert first.next_cursor is not None
    rest = w.audit.list(OWNER, w.ws, AuditQuery(kind=AuditKind.WORKSPACE, cursor=first.next_cursor))
    assert [(e.kind, e.op) for e in rest.events] == [(AuditKind.WORKSPACE, "created")]
    assert rest.next_cursor is None


def test_events_expire_with_their_own_retention() -> None:
    w = World()
    w.clock.advance(366 * 86_400)
    assert w.audit.list(OWNER, w.ws, AuditQuery()).events == []
