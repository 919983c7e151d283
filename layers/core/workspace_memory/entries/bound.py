"""What a key session's binding (workspaces/key_binding.py, decisions/0077) lets its agents see of entries: judged
on an entry's scope and type first (its metadata, nothing decrypted), then, for a prefix binding only, on its key
(sealed in its text, opened under the warm branch key)."""

from __future__ import annotations

from collections.abc import Callable

from workspace_memory.entries.model import EntryText, entry_context
from workspace_memory.kernel.errors import EntryNotFound
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Cipher
from workspace_memory.workspaces.key_binding import KeyBinding


def admits_head(binding: KeyBinding, cipher: Cipher, workspace_id: str, head: EntryRecord) -> bool:
    if not binding.admits_kind(head.scope, head.type):
        return False
    if not binding.needs_key:
        return True
    context = entry_context(workspace_id, head.entry_id, head.revision)
    text = EntryText.parse(unseal(cipher, head.ciphertext, context, head.sha256))
    return binding.admits_key(text.key)


def heads_within(binding: KeyBinding | None, cipher: Cipher, workspace_id: str) -> Callable[[EntryRecord], bool] | None:
    """The filter recall's rules and index apply to their heads; None for an unbound session (no filter)."""
    if binding is None:
        return None
    return lambda head: admits_head(binding, cipher, workspace_id, head)


def require_visible(binding: KeyBinding | None, cipher: Cipher, workspace_id: str) -> Callable[[EntryRecord], None]:
    """A forget proposal's guard: an entry outside the binding is not found, as one the session cannot see."""

    def guard(head: EntryRecord) -> None:
        if binding is not None and not admits_head(binding, cipher, workspace_id, head):
            raise EntryNotFound("entry not found")

    return guard
