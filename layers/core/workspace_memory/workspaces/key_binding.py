"""A key session's binding to a context (docs/decisions/0077): the entry scopes, types and key prefixes an agent
runtime under it may touch. Everything the session does stays inside: a write outside is refused
(`OUTSIDE_KEY_SESSION_BINDING`), and a read, a search, recall's index, rules and selection leave out what is outside,
as they leave out another member's private entry.

A binding only narrows: it is fixed when the session is opened (no route changes it), it is judged after, never
instead of, visibility, the session's scopes and the write right, and an unbound field admits everything. Entry
keys may hold what a person wrote, so the prefixes are sealed (decisions/0055): under the KMS key with the naming
service kind `key-session-binding` (the function that opens key sessions holds no branch key by design, decision
0072), the workspace and the session in the context, so a sealed binding copied onto another session does not open
there. Scopes and types are enumerations and stay in clear.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from workspace_memory.entries.validation import KEY_PREFIX_PATTERN
from workspace_memory.governance.redaction import findings
from workspace_memory.kernel.errors import InvalidKeySessionBinding, OutsideKeySessionBinding
from workspace_memory.kernel.terms import EntryScope, EntryType
from workspace_memory.store.ports import Cipher

BINDING_KIND = "key-session-binding"
"""A naming service kind (adapters/routed_cipher.py): the KMS key, though the context names the workspace."""
MAX_KEY_PREFIXES = 4
MAX_KEY_PREFIX_CHARS = 96
_T = TypeVar("_T")


def binding_context(workspace_id: str, key_session_id: str) -> dict[str, str]:
    return {"kind": "key-session-binding", "workspace": workspace_id, "keySession": key_session_id}


class BindRequest(Protocol):
    """A binding as asked for (the request's `bind`), not yet judged."""

    @property
    def scopes(self) -> Sequence[EntryScope] | None: ...

    @property
    def types(self) -> Sequence[EntryType] | None: ...

    @property
    def key_prefixes(self) -> Sequence[str] | None: ...


@dataclass(frozen=True)
class KeyBinding:
    """None in a field: that field is not bound. `key_prefixes` sorted, none covering another."""

    scopes: frozenset[EntryScope] | None = None
    types: frozenset[EntryType] | None = None
    key_prefixes: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls,
        scopes: Iterable[EntryScope] | None = None,
        types: Iterable[EntryType] | None = None,
        key_prefixes: Iterable[str] | None = None,
    ) -> KeyBinding:
        """A validated binding (InvalidKeySessionBinding otherwise): at least one field, none empty, at most
        `MAX_KEY_PREFIXES` prefixes, each the start of an entry key that redaction finds nothing in. A prefix
        another one covers adds nothing and is dropped (`ops/` covers `ops/db`)."""
        bound_scopes = None if scopes is None else frozenset(scopes)
        bound_types = None if types is None else frozenset(types)
        prefixes = None if key_prefixes is None else list(key_prefixes)
        if bound_scopes is None and bound_types is None and prefixes is None:
            raise InvalidKeySessionBinding("bind must name scopes, types or keyPrefixes")
        for name, value in (("scopes", bound_scopes), ("types", bound_types), ("keyPrefixes", prefixes)):
            if value is not None and not value:
                raise InvalidKeySessionBinding(f"bind.{name} must not be empty (leave it out to bind nothing)")
        return cls(bound_scopes, bound_types, None if prefixes is None else _normal_prefixes(prefixes))

    @property
    def needs_key(self) -> bool:
        """Whether judging an entry needs its key (sealed in its text): only a prefix binding does."""
        return self.key_prefixes is not None

    def admits_kind(self, scope: EntryScope, entry_type: EntryType | None) -> bool:
        """Scope and type alone (what an entry's metadata says, nothing decrypted). A forgotten chain has no type:
        a type binding leaves it out."""
        if self.scopes is not None and scope not in self.scopes:
            return False
        return self.types is None or (entry_type is not None and entry_type in self.types)

    def admits_key(self, key: str | None) -> bool:
        """An entry without a key is outside a prefix binding."""
        if self.key_prefixes is None:
            return True
        return key is not None and any(key.startswith(prefix) for prefix in self.key_prefixes)

    def admits(self, scope: EntryScope, entry_type: EntryType | None, key: str | None) -> bool:
        return self.admits_kind(scope, entry_type) and self.admits_key(key)

    def require(self, scope: EntryScope, entry_type: EntryType, key: str | None) -> None:
        """Refuse a write outside (403 `OUTSIDE_KEY_SESSION_BINDING`), naming the field that is outside."""
        if self.scopes is not None and scope not in self.scopes:
            raise OutsideKeySessionBinding("the key session is not bound to this entry scope")
        if self.types is not None and entry_type not in self.types:
            raise OutsideKeySessionBinding("the key session is not bound to this entry type")
        if not self.admits_key(key):
            raise OutsideKeySessionBinding("the entry key is not under a key prefix the key session is bound to")

    def narrowed(self, other: KeyBinding | None) -> KeyBinding:
        """What both admit: a binding combined with another only narrows (a field bound in either is bound)."""
        if other is None:
            return self
        prefixes = _meet(self.key_prefixes, other.key_prefixes)
        return KeyBinding(_both(self.scopes, other.scopes), _both(self.types, other.types), prefixes)


def _both(a: frozenset[_T] | None, b: frozenset[_T] | None) -> frozenset[_T] | None:
    return b if a is None else a if b is None else a & b


def _meet(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The prefixes under both: of each pair, the longer when one covers the other (else nothing of the pair)."""
    if a is None or b is None:
        return b if a is None else a
    met = {x if x.startswith(y) else y for x in a for y in b if x.startswith(y) or y.startswith(x)}
    return tuple(sorted(met))


def _normal_prefixes(prefixes: list[str]) -> tuple[str, ...]:
    if len(prefixes) > MAX_KEY_PREFIXES:
        raise InvalidKeySessionBinding(f"bind.keyPrefixes holds at most {MAX_KEY_PREFIXES} prefixes")
    for index, prefix in enumerate(prefixes):
        if not isinstance(prefix, str) or len(prefix) > MAX_KEY_PREFIX_CHARS:
            raise InvalidKeySessionBinding(f"bind.keyPrefixes[{index}] must be 1-{MAX_KEY_PREFIX_CHARS} characters")
        if not KEY_PREFIX_PATTERN.fullmatch(prefix):
            raise InvalidKeySessionBinding(
                f"bind.keyPrefixes[{index}] must start a namespace/name key: lower-case letters, digits, '.', '_', '-'"
            )
        if findings(prefix):
            raise InvalidKeySessionBinding(f"bind.keyPrefixes[{index}] must not hold personal data or secrets")
    unique = sorted(set(prefixes))
    return tuple(p for p in unique if not any(p != q and p.startswith(q) for q in unique))


def seal_prefixes(cipher: Cipher, workspace_id: str, key_session_id: str, prefixes: tuple[str, ...]) -> bytes:
    plaintext = json.dumps(list(prefixes), separators=(",", ":")).encode("utf-8")
    return cipher.encrypt(plaintext, binding_context(workspace_id, key_session_id))


def open_prefixes(cipher: Cipher, workspace_id: str, key_session_id: str, sealed: bytes) -> tuple[str, ...]:
    raw = cipher.decrypt(sealed, binding_context(workspace_id, key_session_id)).decode("utf-8")
    return tuple(str(prefix) for prefix in json.loads(raw))
