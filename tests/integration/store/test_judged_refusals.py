"""A failed compare-and-set brings back the item it was judged against, alike on DynamoDB (moto) and in memory.

Each case seeds a few items, runs one transaction that must be cancelled, and compares what the two table
adapters report: the failed labels, and for every key whether the cancellation knows its item and which.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.bootstrap import Services
from workspace_memory.store import keys
from workspace_memory.store.changes import (
    Change,
    EntryNotPinned,
    Label,
    MarkEntryHead,
    MemberCanWrite,
    MoveEntryHead,
    MoveHead,
    ReplaceRevision,
    SetPolicyMode,
)
from workspace_memory.store.ports import Item, Table, TransactionCancelled

pytestmark = pytest.mark.integration


def head(ws: str, version: int) -> Item:
    return {**keys.as_key(keys.head(ws)), "headVersion": version, "ciphertext": b"\x00sealed", "tombstone": False}


def policy(ws: str, revision: int) -> Item:
    return {**keys.as_key(keys.policy(ws)), "mode": "auto", "policyRevision": revision, "clearGeneration": 3}


def entry(ws: str, revision: int) -> Item:
    return {**keys.as_key(keys.entry(ws, "en_1")), "entryId": "en_1", "revision": revision, "status": "active"}


def pinned(ws: str, revision: int) -> Item:
    return {**entry(ws, revision), "pinned": True}


def notes_key(ws: str, user: str) -> keys.Key:
    return keys.ws(ws), f"NOTES#{user}#s1"


def notebook(ws: str, revision: int, user: str = "alice") -> Item:
    return {**keys.as_key(notes_key(ws, user)), "revision": revision, "ciphertext": b"\x01"}


@dataclass(frozen=True)
class Case:
    name: str
    stored: Callable[[str], list[Item]]
    changes: Callable[[str], Sequence[Change]]
    seen: Callable[[str], dict[keys.Key, Item | None]]
    """What the cancellation must know: key -> the item as judged (None: there was none)."""


CASES = [
    Case(
        "a head moved past the base",
        lambda ws: [head(ws, 2)],
        lambda ws: [MoveHead(head(ws, 2), 1)],
        lambda ws: {keys.head(ws): head(ws, 2)},
    ),
    Case(
        "create-only on a saved document",
        lambda ws: [head(ws, 1)],
        lambda ws: [MoveHead(head(ws, 1), 0)],
        lambda ws: {keys.head(ws): head(ws, 1)},
    ),
    Case(
        "a base ahead of a document never saved",
        lambda ws: [],
        lambda ws: [MoveHead(head(ws, 4), 3)],
        lambda ws: {keys.head(ws): None},
    ),
    Case(
        "a stale policy revision",
        lambda ws: [policy(ws, 5)],
        lambda ws: [SetPolicyMode(ws, "off", 4, "2026-01-01T00:00:00Z", "alice")],
        lambda ws: {keys.policy(ws): policy(ws, 5)},
    ),
    Case(
        "a policy revision on the default policy",
        lambda ws: [],
        lambda ws: [SetPolicyMode(ws, "off", 2, "2026-01-01T00:00:00Z", "alice")],
        lambda ws: {keys.policy(ws): None},
    ),
    Case(
        "an entry head moved on",
        lambda ws: [entry(ws, 3)],
        lambda ws: [MoveEntryHead(entry(ws, 2), 1)],
        lambda ws: {keys.entry(ws, "en_1"): entry(ws, 3)},
    ),
    Case(
        "an agent's head move onto a chain pinned meanwhile",
        lambda ws: [pinned(ws, 1)],
        lambda ws: [MoveEntryHead(entry(ws, 2), 1, pinned=False)],
        lambda ws: {keys.entry(ws, "en_1"): pinned(ws, 1)},
    ),
    Case(
        "a person's head move after the pin they read was lifted",
        lambda ws: [entry(ws, 1)],
        lambda ws: [MoveEntryHead(pinned(ws, 2), 1, pinned=True)],
        lambda ws: {keys.entry(ws, "en_1"): entry(ws, 1)},
    ),
    Case(
        "a pin on a head that moved on",
        lambda ws: [entry(ws, 3)],
        lambda ws: [MarkEntryHead(ws, "en_1", 2, pinned=True)],
        lambda ws: {keys.entry(ws, "en_1"): entry(ws, 3)},
    ),
    Case(
        "an agent's proposal over a pinned chain (a check that names no value)",
        lambda ws: [pinned(ws, 1)],
        lambda ws: [EntryNotPinned(ws, "en_1")],
        lambda ws: {},
    ),
    Case(
        "a notebook written meanwhile, and one never written",
        lambda ws: [notebook(ws, 1)],
        lambda ws: [ReplaceRevision(notebook(ws, 1), 0), ReplaceRevision(notebook(ws, 3, "bob"), 2)],
        lambda ws: {notes_key(ws, "alice"): notebook(ws, 1), notes_key(ws, "bob"): None},
    ),
    Case(
        "a check that names no value, beside a compare-and-set that holds",
        lambda ws: [head(ws, 1)],
        lambda ws: [MoveHead(head(ws, 2), 1), MemberCanWrite(ws, "nobody")],
        lambda ws: {},
    ),
]


def cancelled(table: Table, ws: str, case: Case) -> tuple[frozenset[str], dict[keys.Key, Item | None]]:
    for item in case.stored(ws):
        table.put(item)
    changes = case.changes(ws)
    with pytest.raises(TransactionCancelled) as refused:
        table.transact(changes)
    exc = refused.value
    candidates = {keys.head(ws), keys.policy(ws), keys.entry(ws, "en_1"), keys.member(ws, "nobody")}
    candidates |= {notes_key(ws, "alice"), notes_key(ws, "bob")}
    return exc.failed(), {key: exc.seen(key) for key in candidates if exc.saw(key)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_both_tables_report_the_item_the_condition_was_judged_against(svc: Services, case: Case) -> None:
    ws = f"judged-{uuid.uuid4().hex[:8]}"
    on_dynamo = cancelled(svc.table, ws, case)
    in_memory = cancelled(MemoryTable(), ws, case)
    assert on_dynamo == in_memory
    assert on_dynamo[1] == case.seen(ws)


def test_a_key_the_cancellation_does_not_know_is_a_key_error(svc: Services) -> None:
    ws = f"judged-{uuid.uuid4().hex[:8]}"
    with pytest.raises(TransactionCancelled) as refused:
        svc.table.transact([MemberCanWrite(ws, "nobody")])
    assert refused.value.failed() == {Label.ACCESS}
    with pytest.raises(KeyError):
        refused.value.seen(keys.member(ws, "nobody"))


def test_both_tables_mark_a_head_alike(svc: Services) -> None:
    """Pin, verify, unpin, then a person's head move on the pin and an agent's proposal check once unpinned:
    the same items on DynamoDB and in memory."""
    ws = f"marks-{uuid.uuid4().hex[:8]}"
    steps: list[Sequence[Change]] = [
        [MarkEntryHead(ws, "en_1", 1, pinned=True)],
        [MarkEntryHead(ws, "en_1", 1, verified=("2026-12-02T00:00:00.000Z", "alice"))],
        [MoveEntryHead(pinned(ws, 2), 1, pinned=True)],
        [MarkEntryHead(ws, "en_1", 2, pinned=False)],
        [EntryNotPinned(ws, "en_1")],
    ]
    heads = []
    for table in (svc.table, MemoryTable()):
        table.put(entry(ws, 1))
        seen = []
        for changes in steps:
            table.transact(changes)
            seen.append(table.get(*keys.entry(ws, "en_1")))
        heads.append(seen)
    assert heads[0] == heads[1]
    assert heads[0][1] == {**pinned(ws, 1), "verifiedAt": "2026-12-02T00:00:00.000Z", "verifiedBy": "alice"}
    assert heads[0][3] == entry(ws, 2)
