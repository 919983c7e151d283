"""Reading what entries cite (docs/architecture.md#citations): the heads of cited entries and the cited document
versions, by key, 100 keys per consistent read (one TransactGetItems each; none when nothing is cited)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.document_records import VersionRecord
from workspace_memory.store.entry_records import EntryHead, head_of
from workspace_memory.store.keys import Key
from workspace_memory.store.ports import Table

BATCH = 100
"""Keys per consistent read: TransactGetItems' limit."""


@dataclass(frozen=True)
class Cited:
    """The cited items as read: each entry's head (None: no such chain) and each document version (None: none)."""

    entries: dict[str, EntryHead | None]
    versions: dict[int, VersionRecord | None]


def cited(table: Table, workspace_id: str, entry_ids: Sequence[str], versions: Sequence[int]) -> Cited:
    wanted: list[tuple[str, str | int, Key]] = [("e", e, keys.entry(workspace_id, e)) for e in entry_ids]
    wanted += [("v", n, keys.version(workspace_id, n)) for n in versions]
    found = Cited({}, {})
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start : start + BATCH]
        for (kind, ref, _), item in zip(batch, table.get_many([key for _, _, key in batch]), strict=True):
            if kind == "e":
                found.entries[str(ref)] = head_of(item)
            else:
                found.versions[int(ref)] = VersionRecord.of(item)
    return found
