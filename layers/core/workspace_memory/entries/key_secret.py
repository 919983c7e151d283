"""Entry keys are found by an HMAC, never stored in the clear (docs/architecture.md#keys): under a per-workspace
secret made at first use and sealed under the workspace's branch key, so deleting that key shreds it too."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from workspace_memory.entries.model import secret_context
from workspace_memory.kernel.errors import Conflict, WorkspaceNotFound
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store.changes import Create, Label, WorkspaceLive
from workspace_memory.store.entry_queries import key_secret
from workspace_memory.store.entry_records import key_secret_item
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled

SECRET_CACHE_SIZE = 1024


@dataclass
class _Secrets:
    """Workspace -> HMAC secret for entry keys, per process (bounded, oldest out)."""

    by_workspace: dict[str, bytes] = field(default_factory=dict)

    def get(self, workspace_id: str) -> bytes | None:
        return self.by_workspace.get(workspace_id)

    def put(self, workspace_id: str, secret: bytes) -> None:
        if len(self.by_workspace) >= SECRET_CACHE_SIZE:
            del self.by_workspace[next(iter(self.by_workspace))]
        self.by_workspace[workspace_id] = secret


def _hmac(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "\x00".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


class KeySecret:
    def __init__(self, table: Table, cipher: Cipher) -> None:
        self._table = table
        self._cipher = cipher
        self._secrets = _Secrets()

    def slot(self, workspace_id: str, scope: EntryScope, owner: str, key: str) -> str:
        """The key's slot: unique among a scope's (and its owner's) active entries."""
        return _hmac(self._secret(workspace_id), "slot", scope.value, owner, key)

    def lookup(self, workspace_id: str, key: str) -> str:
        """What a list filtered by key matches, in every scope."""
        return _hmac(self._secret(workspace_id), "key", key)

    def source(self, workspace_id: str, kind: str, ref: str) -> str:
        """What a revision drew on (a cited source's kind and ref, or `admission` and a turn's admission id), as
        the name of the block a forget leaves (decisions/0074): never the ref in clear."""
        return _hmac(self._secret(workspace_id), "source", kind, ref)

    def _secret(self, workspace_id: str) -> bytes:
        """The workspace's HMAC secret: read (and cached) or made at first use, sealed under the branch key."""
        cached = self._secrets.get(workspace_id)
        if cached is not None:
            return cached
        sealed = key_secret(self._table, workspace_id)
        if sealed is None:
            made = seal(self._cipher, secrets.token_bytes(32).hex(), secret_context(workspace_id)).ciphertext
            try:  # never into a deleted workspace: a write judged before its tombstone may run after its purge
                self._table.transact(
                    [Create(key_secret_item(workspace_id, made), Label.ENTRY_KEY), WorkspaceLive(workspace_id)]
                )
                sealed = made
            except TransactionCancelled as exc:  # another process made it first: use theirs
                if Label.WORKSPACE in exc.failed():
                    raise WorkspaceNotFound("workspace not found") from None
                sealed = key_secret(self._table, workspace_id)
                if sealed is None:
                    raise Conflict("the entry key secret changed concurrently; try again") from None
        secret = bytes.fromhex(unseal(self._cipher, sealed, secret_context(workspace_id)))
        self._secrets.put(workspace_id, secret)
        return secret
