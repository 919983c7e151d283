"""An encrypted snapshot of a workspace's search index, so a cold process does not unseal one message per
revision (docs/architecture.md#the-search-snapshot; docs/decisions/0033-the-search-snapshot.md).

The documents an index holds (ids, metadata, text, what each cites and packed vectors) are serialized, compressed
and sealed ONCE under the workspace's branch key, with an encryption context naming the workspace, the snapshot
kind, its `entriesRevision` and its generation. The ciphertext is split into chunks of at most 350,000 bytes
(`SEARCHSNAP#<generation>#<part>` items of the workspace partition); a pointer (`SEARCHSNAP#HEAD`) names the
current generation, its revision, its chunk count and the ciphertext's SHA-256. Chunks are written first, then the
pointer, each in a transaction that re-checks the workspace's `entriesRevision`: a snapshot built before a forget
(which bumps it) is never stored. Superseded generations are not deleted by the writer (search needs no delete
right); every snapshot item carries a `ttl` no later than the earliest retention end of a revision it holds and at
most `MAX_AGE_SECONDS` after it was built, and a forget removes every snapshot item of the workspace (`drop`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.store import search_queries
from workspace_memory.store.changes import Change, Delete, EntriesRevisionIs, ExpireSearchSnapshot, Put
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.search_records import SnapshotChunk, SnapshotPointer

if TYPE_CHECKING:
    from workspace_memory.search.engine import SearchDoc

CHUNK_BYTES = 350_000
"""Ciphertext per item: under DynamoDB's 400 KB item limit with the key and attributes beside it."""
CHUNKS_PER_TRANSACTION = 8
"""Chunks written per transaction (~2.8 MB, under TransactWriteItems' 4 MB)."""
MAX_AGE_SECONDS = 86_400
"""A snapshot lives at most one day, the shortest retention a workspace may choose (`historyDays` ≥ 1): an
entry superseded after the snapshot was built expires no earlier than the snapshot holding its text."""
DROP_BATCH = 100
FORMAT = 3
"""2: a document carries what its revision replaced (`previously`); 3: and what it cites (`sources`), judged after
ranking (docs/decisions/0081). A pointer of another format is ignored: the next build decrypts the revisions and
stores a snapshot in this one."""


def context(workspace_id: str, entries_revision: int, generation: str) -> dict[str, str]:
    return {
        "workspace": workspace_id,
        "kind": "search-snapshot",
        "entriesRevision": str(entries_revision),
        "generation": generation,
    }


@dataclass(frozen=True)
class Snapshot:
    entries_revision: int
    docs: tuple[SearchDoc, ...]
    expires: float | None = None
    """Its `ttl`: no later than the earliest expiry of a revision it holds."""
    complete: bool = True
    """Whether it holds every revision retained at `entries_revision` (an owner's reindex stores it in steps)."""


def _row(doc: SearchDoc) -> list[object]:
    from workspace_memory.search.engine import pack_vector

    vector = None if doc.vector is None else pack_vector(doc.vector)
    return [
        doc.entry_id,
        doc.revision,
        doc.scope,
        doc.owner,
        doc.type,
        doc.key,
        doc.title,
        doc.summary,
        doc.body,
        doc.valid_from,
        doc.valid_to,
        vector,
        None if doc.previously is None else doc.previously.wire(),
        [source.wire() for source in doc.sources],
    ]


def _doc(row: list[object]) -> SearchDoc:
    from workspace_memory.entries.model import Previously, Source
    from workspace_memory.search.engine import SearchDoc, unpack_vector

    entry_id, revision, scope, owner, type_, key, title, summary, body, valid_from, valid_to, vector, before, cited = (
        row
    )
    replaced = Previously.of(before) if isinstance(before, dict) else None
    sources = tuple(Source.of(s) for s in cited if isinstance(s, dict)) if isinstance(cited, list) else ()
    return SearchDoc(
        entry_id=str(entry_id),
        revision=int(str(revision)),
        scope=str(scope),
        owner=str(owner),
        type=str(type_),
        key=None if key is None else str(key),
        title=str(title),
        summary=str(summary),
        body=str(body),
        valid_from=float(str(valid_from)),
        valid_to=None if valid_to is None else float(str(valid_to)),
        vector=None if vector is None else unpack_vector(str(vector)),
        previously=replaced,
        sources=sources,
    )


def load(table: Table, cipher: Cipher, workspace_id: str, now: float) -> Snapshot | None:
    """The workspace's current snapshot, decrypted once; None when there is none, it expired, or a forget is
    removing it while it is read (a chunk missing): the caller then builds from the revisions."""
    pointer = search_queries.snapshot_pointer(table, workspace_id, FORMAT)
    if pointer is None or pointer.expired(now):
        return None
    generation, count = pointer.generation, pointer.chunks
    parts = search_queries.snapshot_chunks(table, workspace_id, generation, count)
    if len(parts) < count:
        return None
    blob = b"".join(chunk.part for chunk in parts)
    if hashlib.sha256(blob).hexdigest() != pointer.sha256:
        raise DecryptionFailed("search snapshot does not match its recorded digest")
    revision = pointer.entries_revision
    plaintext = cipher.decrypt(blob, context(workspace_id, revision, generation))
    rows = json.loads(zlib.decompress(plaintext))
    return Snapshot(revision, tuple(_doc(r) for r in rows), float(pointer.ttl), pointer.complete)


def store(
    table: Table,
    cipher: Cipher,
    workspace_id: str,
    entries_revision: int,
    docs: Sequence[SearchDoc],
    *,
    now: float,
    ttl: int | None,
    complete: bool = True,
) -> bool:
    """Seal `docs` as the snapshot at `entries_revision`: chunks, then the pointer, each iff the workspace's
    entries are still at that revision. False (nothing current changed) when they moved on meanwhile. A snapshot
    not `complete` lacks some revisions: a cold build reuses what it holds and decrypts the rest."""
    generation = f"{entries_revision:012d}-{secrets.token_hex(4)}"
    expires = int(now) + MAX_AGE_SECONDS if ttl is None else min(ttl, int(now) + MAX_AGE_SECONDS)
    packed = zlib.compress(json.dumps([_row(d) for d in docs], ensure_ascii=False).encode("utf-8"), 6)
    blob = cipher.encrypt(packed, context(workspace_id, entries_revision, generation))
    parts = [blob[i : i + CHUNK_BYTES] for i in range(0, len(blob), CHUNK_BYTES)] or [b""]
    still = EntriesRevisionIs(workspace_id, entries_revision)
    chunks: list[Change] = [
        Put(SnapshotChunk(generation, n, part, expires).to_item(workspace_id)) for n, part in enumerate(parts)
    ]
    digest = hashlib.sha256(blob).hexdigest()
    pointer = SnapshotPointer(
        FORMAT, generation, entries_revision, len(parts), len(docs), len(blob), digest, expires, complete
    )
    try:
        for start in range(0, len(chunks), CHUNKS_PER_TRANSACTION):
            table.transact([still, *chunks[start : start + CHUNKS_PER_TRANSACTION]])
        table.transact([still, Put(pointer.to_item(workspace_id))])
    except TransactionCancelled:
        return False
    return True


def expire(table: Table, workspace_id: str, now: float) -> int:
    """Expire every snapshot item of the workspace at `now` (one that expires earlier keeps its `ttl`): after
    a retention change, whose new expiries a stored snapshot's `ttl` was not judged against. Unlike `drop` it
    needs no delete right (the retention's role has none); `load` already refuses an expired pointer, and
    DynamoDB's TTL deletes the items as it deletes the expired revisions. Run after `entriesRevision` moved,
    so no snapshot built before can land afterwards. Returns how many items it expired."""
    expired = 0
    due = [
        ExpireSearchSnapshot(key, int(now))
        for key, ttl in search_queries.snapshot_expiries(table, workspace_id, page_size=DROP_BATCH)
        if ttl is None or ttl > int(now)
    ]
    for start in range(0, len(due), DROP_BATCH):
        batch = due[start : start + DROP_BATCH]
        with contextlib.suppress(TransactionCancelled):  # an item a forget deleted meanwhile is gone already
            table.transact(batch)
        expired += len(batch)
    return expired


def drop(table: Table, workspace_id: str) -> int:
    """Delete every snapshot item of the workspace (pointer and all generations): after a forget, no snapshot
    may keep the forgotten text. Run after the forget's transaction bumped `entriesRevision`, so a snapshot
    being written concurrently can no longer land (its condition fails) and what landed before is found here
    (the Query is consistent). Returns how many items it deleted."""
    deleted = 0
    while True:
        found = search_queries.snapshot_keys(table, workspace_id, DROP_BATCH)
        if not found:
            return deleted
        table.transact([Delete(key) for key in found])
        deleted += len(found)
