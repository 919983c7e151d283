"""The caller's key sessions and workspaces over the in-memory table: paging past other members' sessions,
the bound on reads per page, expiry, and deleted workspaces left out (no sockets)."""

from __future__ import annotations

import pytest

from tests.memory_table import MemoryKeyStore, MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.store import keys
from workspace_memory.workspaces.access import AccessService, Role, ShareType
from workspace_memory.workspaces.keysessions import MAX_LIST_READS, TTL_GRACE_SECONDS, KeySessionService

pytestmark = pytest.mark.unit

OWNER, BOB = "olivia", "bob"


class World:
    def __init__(self) -> None:
        self.table = MemoryTable()
        self.clock = ManualClock()
        store = MemoryKeyStore()
        self.access = AccessService(self.table, self.clock, store, FakeCipher(store))
        self.key_sessions = KeySessionService(self.table, self.clock, FakeCipher(store))
        self.ws = self.access.create_workspace(OWNER, "team", ShareType.SHARED)
        self.access.put_member(OWNER, self.ws, BOB, Role.EDITOR)

    def open(self, user: str, ttl: int = 3600) -> str:
        self.clock.advance(0.002)  # ids order by the millisecond they were opened in
        return self.key_sessions.open(user, self.ws, ttl).id

    def all_listed(self, user: str, limit: int) -> list[str]:
        """Every id the listing gives `user`, page by page."""
        found: list[str] = []
        cursor: str | None = None
        while True:
            page = self.key_sessions.list_own(user, self.ws, limit, cursor)
            assert len(page.sessions) <= limit
            found.extend(s.session.id for s in page.sessions)
            cursor = page.next_cursor
            if cursor is None:
                return found


@pytest.mark.parametrize("limit", [1, 2, 3, 100])
def test_own_sessions_page_by_page_newest_first_past_other_members(limit: int) -> None:
    world = World()
    mine: list[str] = []
    bobs: list[str] = []
    for i in range(12):
        bobs.append(world.open(BOB))
        if i % 4 == 0:
            mine.append(world.open(OWNER))
    assert world.all_listed(OWNER, limit) == mine[::-1]
    assert world.all_listed(BOB, limit) == bobs[::-1]


def test_a_page_reads_a_bounded_number_of_queries_then_answers_short() -> None:
    world = World()
    mine = world.open(OWNER)
    for _ in range(MAX_LIST_READS * 2 + 1):
        world.open(BOB)
    before = world.table.reads
    first = world.key_sessions.list_own(OWNER, world.ws, 2, None)
    # one snapshot for membership, at most MAX_LIST_READS queries, and no revocation read for an empty page
    assert world.table.reads - before <= 1 + MAX_LIST_READS
    assert first.sessions == []
    assert first.next_cursor is not None
    assert world.all_listed(OWNER, 2) == [mine]


def test_revocation_and_expiry() -> None:
    world = World()
    short, kept, revoked = world.open(OWNER, ttl=60), world.open(OWNER), world.open(OWNER)
    world.key_sessions.revoke(OWNER, world.ws, revoked)
    page = world.key_sessions.list_own(OWNER, world.ws, 10, None)
    assert [(s.session.id, s.revoked) for s in page.sessions] == [(revoked, True), (kept, False), (short, False)]
    world.clock.advance(60 + TTL_GRACE_SECONDS)  # past the short one's TTL: gone, even before DynamoDB deletes it
    page = world.key_sessions.list_own(OWNER, world.ws, 10, None)
    assert [s.session.id for s in page.sessions] == [revoked, kept]


def test_workspaces_are_the_callers_with_current_roles_and_deleted_ones_left_out() -> None:
    world = World()
    other = world.access.create_workspace(BOB, "bob's", ShareType.PRIVATE)
    world.access.put_member(BOB, other, OWNER, Role.VIEWER)
    gone = world.access.create_workspace(OWNER, "gone", ShareType.SHARED)
    meta = world.table.get(*keys.meta(gone))
    assert meta is not None
    world.table.put({**meta, "deletedAt": "2026-01-01T00:00:00Z"})
    for limit in (1, 2, 50):
        found: dict[str, tuple[str, Role]] = {}
        cursor: str | None = None
        while True:
            page = world.access.memberships(OWNER, limit, cursor)
            for m in page.workspaces:
                assert m.workspace_id not in found
                found[m.workspace_id] = (m.name, m.role)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert found == {world.ws: ("team", Role.OWNER), other: ("bob's", Role.VIEWER)}, limit
    assert {m.workspace_id for m in world.access.memberships(BOB, 50, None).workspaces} == {world.ws, other}
