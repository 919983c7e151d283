"""The workspace records spell the items exactly as stored (docs/data-model.md): every item the workspaces
context writes reads back into its record and out again unchanged, and an optional attribute that is not set
is not stored."""

from __future__ import annotations

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.kernel.terms import Role, Scope, ShareType
from workspace_memory.store import keys, workspace_queries
from workspace_memory.store.changes import DEFAULT_HISTORY_DAYS
from workspace_memory.store.ports import Item
from workspace_memory.store.workspace_records import (
    KeyRevocationRecord,
    KeySessionRecord,
    MemberRecord,
    OwnerOf,
    Workspace,
    history_days_of,
    is_deleted,
)

pytestmark = pytest.mark.unit

WS = "ws_1"
AT = "2027-01-15T08:00:00.000Z"


def meta_item(**extra: object) -> Item:
    return {
        **keys.as_key(keys.meta(WS)),
        "workspaceId": WS,
        "branchKeyId": "bk_1",
        "nameCiphertext": b"sealed name",
        "ownerId": "olivia",
        "shareType": "shared",
        "aiEnabled": False,
        "consentRevision": 0,
        "historyDays": DEFAULT_HISTORY_DAYS,
        "createdAt": AT,
        **extra,
    }


def test_a_workspace_reads_back_and_out_unchanged() -> None:
    live = meta_item()
    workspace = Workspace.from_item(live)
    assert (workspace.share_type, workspace.deleted, workspace.branch_key_id) == (ShareType.SHARED, False, "bk_1")
    assert workspace.to_item() == live
    assert not is_deleted(live)
    tombstoned = meta_item(aiEnabled=False, consentRevision=1, deletedAt=AT, deletedBy="olivia")
    deleted = Workspace.from_item(tombstoned)
    assert (deleted.deleted, deleted.deleted_by) == (True, "olivia")
    assert deleted.to_item() == tombstoned
    assert is_deleted(tombstoned)


def test_a_workspace_with_no_optional_attributes_stores_none_of_them() -> None:
    workspace = Workspace(WS, "olivia", ShareType.PRIVATE, ai_enabled=True, consent_revision=2)
    item = workspace.to_item()
    assert "branchKeyId" not in item
    assert "deletedAt" not in item
    assert "deletedBy" not in item
    assert Workspace.from_item(item) == workspace
    assert Workspace.of(None) is None


def test_the_retention_of_a_workspace_item_defaults_when_unnamed() -> None:
    assert history_days_of(None) == DEFAULT_HISTORY_DAYS
    assert history_days_of(meta_item(historyDays=30)) == 30
    bare = meta_item()
    del bare["historyDays"]
    assert history_days_of(bare) == DEFAULT_HISTORY_DAYS
    assert Workspace.from_item(bare).history_days == DEFAULT_HISTORY_DAYS


def test_a_member_reads_back_and_out_unchanged() -> None:
    item = {**keys.as_key(keys.member(WS, "noah")), "userId": "noah", "role": "editor", "canWrite": True}
    member = MemberRecord.from_item({**item, "updatedAt": AT})
    assert (member.role, member.can_write) == (Role.EDITOR, True)
    assert member.to_item(WS) == {**item, "updatedAt": AT}
    assert MemberRecord(member.user_id, member.role, member.can_write).to_item(WS) == item
    assert MemberRecord.of(None) is None


def test_a_key_session_reads_back_and_out_unchanged_and_one_without_scopes_names_none() -> None:
    item = {
        **keys.as_key(keys.key_session(WS, "ks_1")),
        "keySessionId": "ks_1",
        "openedBy": "olivia",
        "scopes": ["memory:read", "notes"],
        "expiresAt": 1_800_000_000,
        "ttl": 1_800_086_400,
    }
    session = KeySessionRecord.from_item(item)
    assert session.scopes == frozenset({Scope.MEMORY_READ, Scope.NOTES})
    assert session.to_item(WS) == item
    legacy = {name: value for name, value in item.items() if name != "scopes"}
    assert KeySessionRecord.from_item(legacy).scopes is None
    assert KeySessionRecord.from_item(legacy).to_item(WS) == legacy
    assert session.expired(1_800_086_400)
    assert not session.expired(1_800_086_399)


def test_a_revocation_reads_back_and_out_unchanged() -> None:
    item = {
        **keys.as_key(keys.key_revocation(WS, "ks_1")),
        "keySessionId": "ks_1",
        "revokedBy": "olivia",
        "revokedAt": AT,
    }
    assert KeyRevocationRecord.from_item(item).to_item(WS) == item


def test_the_queries_read_owner_sessions_and_partition_keys() -> None:
    table = MemoryTable()
    owner = {**keys.as_key(keys.conversation_owner("c1")), "workspaceId": WS, "userId": "olivia"}
    table.put(owner)
    assert workspace_queries.conversation_owner(table, "c1") == OwnerOf(WS, "olivia")
    assert workspace_queries.conversation_owner(table, "c2") is None
    sessions = [KeySessionRecord(f"ks_{n}", "olivia", 100 + n, 200 + n) for n in range(3)]
    for session in sessions:
        table.put(session.to_item(WS))
    table.put(meta_item())
    page, cursor = workspace_queries.key_session_page(table, WS, limit=2, cursor=None)
    assert page == [sessions[2], sessions[1]]
    assert cursor is not None
    rest, end = workspace_queries.key_session_page(table, WS, limit=2, cursor=cursor)
    assert rest == [sessions[0]]
    assert end is None
    assert workspace_queries.partition_keys(table, WS, 2) == [
        keys.key_session(WS, "ks_0"),
        keys.key_session(WS, "ks_1"),
    ]
