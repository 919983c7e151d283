"""Every attribute every item kind of the table may carry, and its class (decisions/0055): an id of a declared
format, an enumeration of `kernel/terms`, a number, a timestamp, a hash, or bytes sealed under the workspace's
branch key. Nothing else: free text a person or an agent wrote is sealed, never an attribute of its own.

`violations` judges one item (as the table holds it: strings, numbers, bytes, lists, maps) against this
declaration; the classification tests scan whole tables with it. It names kinds, attributes and classes,
never a value. The few attributes still in clear that are not of a declared format are `CLEAR_TEXT`, each
with its reason: a known finding, listed in `FINDINGS`, never a silent pass."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from workspace_memory.kernel import terms

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""An agent persona (the owner of an `agent` entry, stored in clear): a lower-case id, never prose."""
ENTRY_ID = re.compile(r"en_[0-9a-f]{24}")
VERSION_NUMBER = re.compile(r"[0-9]{1,12}")
"""A document version as a citation names it."""
ISSUED_ID = re.compile(r"[a-z]{1,3}_[0-9a-f]{24,36}")
"""An id the service issued (`new_id`, `new_ordered_id`): a prefix and random hex."""
CALLER_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""A caller-chosen id (conversations, sessions, turns): `kernel.ids.IDENTIFIER`."""
USER_ID = re.compile(r"[A-Za-z0-9._:|-]{1,200}")
"""A user id from the identity provider (its `sub`)."""
HEX64 = re.compile(r"[0-9a-f]{64}")
"""A SHA-256 or an HMAC-SHA-256, hex."""
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")
GENERATION = re.compile(r"\d{12}-[0-9a-f]{8}")
BRANCH_KEY_ID = re.compile(r"[a-z-]{1,16}/ws_[0-9a-f]{24}")
"""The key store's id of a workspace's branch key (`workspace/{ws}`; the in-memory key store's spelling too)."""
CITED = re.compile(r"en_[0-9a-f]{24}@\d{1,6}")
"""`entryId@revision`, as a receipt lists what recall named."""


@dataclass(frozen=True)
class Form:
    """An attribute's class: its name (what a violation reports) and the test of a value in its item."""

    name: str
    test: Callable[[object, Mapping[str, object]], bool]

    def holds(self, value: object, item: Mapping[str, object]) -> bool:
        return self.test(value, item)


def _matches(pattern: re.Pattern[str]) -> Callable[[object, Mapping[str, object]], bool]:
    return lambda value, _item: isinstance(value, str) and pattern.fullmatch(value) is not None


def id_of(name: str, pattern: re.Pattern[str]) -> Form:
    return Form(f"id:{name}", _matches(pattern))


def enum_of(*enums: type[StrEnum] | Iterable[str]) -> Form:
    allowed = frozenset(str(v) for e in enums for v in e)
    return Form("enum", lambda value, _item: isinstance(value, str) and value in allowed)


def _integral(value: object, _item: Mapping[str, object]) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | Decimal) and int(value) == value


def _sealed(value: object, _item: Mapping[str, object]) -> bool:
    return isinstance(value, bytes | bytearray) and len(value) > 0


def list_of(inner: Form) -> Form:
    return Form(
        f"list:{inner.name}",
        lambda value, item: isinstance(value, list | set | tuple) and all(inner.holds(v, item) for v in value),
    )


def map_of(fields: Mapping[str, Form]) -> Form:
    """A map whose keys are declared and whose values are of their declared class."""

    def test(value: object, item: Mapping[str, object]) -> bool:
        return isinstance(value, dict) and all(k in fields and fields[k].holds(v, item) for k, v in value.items())

    return Form("map", test)


def _owner(value: object, item: Mapping[str, object]) -> bool:
    """`-` for a workspace entry, the member's user id, or the agent's name (judged by the item's scope)."""
    scope = item.get("scope")
    if scope == terms.EntryScope.AGENT.value:
        return isinstance(value, str) and AGENT_NAME.fullmatch(value) is not None
    if scope == terms.EntryScope.MEMBER.value:
        return isinstance(value, str) and USER_ID.fullmatch(value) is not None
    return value == "-"


INT = Form("int", _integral)
BOOL = Form("bool", lambda value, _item: isinstance(value, bool))
SEALED = Form("sealed", _sealed)
"""aws-encryption-sdk ciphertext under the workspace's branch key (or, for a credential, the payload key)."""
TIMESTAMP = Form("timestamp", _matches(TIME))
HASH = Form("hash", _matches(HEX64))
ISSUED = id_of("issued", ISSUED_ID)
CALLER = id_of("caller", CALLER_ID)
USER = id_of("user", USER_ID)
ENTRY = id_of("entry", ENTRY_ID)
SCOPE_OWNER = Form("scope-owner", _owner)
CLEAR_TEXT = Form("clear-text", lambda value, _item: isinstance(value, str))
"""Free text in clear: a finding (`FINDINGS`), declared so that it is seen, not so that it passes unseen."""

KEY = {"pk": Form("key", lambda v, _i: isinstance(v, str)), "sk": Form("key", lambda v, _i: isinstance(v, str))}
ENTRY_FIELDS: dict[str, Form] = {
    "entryId": ENTRY,
    "revision": INT,
    "previousRevision": INT,
    "scope": enum_of(terms.EntryScope),
    "scopeOwner": SCOPE_OWNER,
    "type": enum_of(terms.EntryType),
    "status": enum_of(terms.EntryStatus),
    "ciphertext": SEALED,
    "sha256": HASH,
    "validFrom": TIMESTAMP,
    "author": USER,
    "authorKind": enum_of(("human", "agent")),
    "admissionId": ISSUED,
    "keyLookup": HASH,
    "keySlot": HASH,
    "supersededAt": TIMESTAMP,
    "supersededBy": INT,
    "ttl": INT,
}


@dataclass(frozen=True)
class ItemKind:
    """An item kind (named as the change feed names it) by its key prefixes, and its attributes."""

    name: str
    pk_prefix: str
    sk_prefix: str
    attributes: Mapping[str, Form]

    def matches(self, pk: str, sk: str) -> bool:
        exact = not self.sk_prefix.endswith("#")
        return pk.startswith(self.pk_prefix) and (sk == self.sk_prefix if exact else sk.startswith(self.sk_prefix))


_DOC_OP = enum_of(("save", "clear", "undo", "capture"))
_RECEIPT = map_of(
    {"admissionId": ISSUED, "version": INT, "ciphertextSha256": HASH, "bytes": INT, "committedAt": TIMESTAMP}
)
_MEMORY_STATE = map_of({"state": enum_of(("saved", "pending", "conflict")), "version": INT})

KINDS: tuple[ItemKind, ...] = (
    ItemKind(
        "workspace",
        "WS#",
        "META",
        {
            **KEY,
            "workspaceId": ISSUED,
            "name": CLEAR_TEXT,
            "ownerId": USER,
            "shareType": enum_of(terms.ShareType),
            "aiEnabled": BOOL,
            "consentRevision": INT,
            "branchKeyId": id_of("branch-key", BRANCH_KEY_ID),
            "historyDays": INT,
            "createdAt": TIMESTAMP,
            "deletedAt": TIMESTAMP,
            "deletedBy": USER,
        },
    ),
    ItemKind(
        "member",
        "WS#",
        "MEMBER#",
        {**KEY, "userId": USER, "role": enum_of(terms.Role), "canWrite": BOOL, "updatedAt": TIMESTAMP},
    ),
    ItemKind(
        "policy", "WS#", "POLICY", {**KEY, "mode": enum_of(terms.Mode), "policyRevision": INT, "clearGeneration": INT}
    ),
    ItemKind(
        "document-head",
        "WS#",
        "DOC#HEAD",
        {
            **KEY,
            "headVersion": INT,
            "ciphertext": SEALED,
            "sha256": HASH,
            "bytes": INT,
            "op": _DOC_OP,
            "updatedAt": TIMESTAMP,
            "updatedBy": USER,
            "tombstone": BOOL,
        },
    ),
    ItemKind(
        "document-version",
        "WS#",
        "DOC#V#",
        {
            **KEY,
            "version": INT,
            "ciphertext": SEALED,
            "sha256": HASH,
            "bytes": INT,
            "op": _DOC_OP,
            "author": USER,
            "baseVersion": INT,
            "restoredFrom": INT,
            "admissionId": ISSUED,
            "turnId": CALLER,
            "createdAt": TIMESTAMP,
            "supersededAt": TIMESTAMP,
            "purgedAt": TIMESTAMP,
            "purgedBy": USER,
            "ttl": INT,
        },
    ),
    ItemKind(
        "key-session",
        "WS#",
        "KEYSESSION#",
        {
            **KEY,
            "keySessionId": ISSUED,
            "openedBy": USER,
            "scopes": list_of(enum_of(terms.Scope)),
            "expiresAt": INT,
            "ttl": INT,
        },
    ),
    ItemKind(
        "key-revocation",
        "WS#",
        "KEYREVOKED#",
        {**KEY, "keySessionId": ISSUED, "revokedBy": USER, "revokedAt": TIMESTAMP},
    ),
    ItemKind(
        "notes",
        "WS#",
        "NOTES#",
        {
            **KEY,
            "workspaceId": ISSUED,
            "ciphertext": SEALED,
            "sha256": HASH,
            "bytes": INT,
            "revision": INT,
            "updatedAt": TIMESTAMP,
            "ttl": INT,
        },
    ),
    ItemKind(
        "entry",
        "WS#",
        "ENTRY#",
        {
            **KEY,
            **ENTRY_FIELDS,
            "readCount": INT,
            "lastReadAt": TIMESTAMP,
            "forgottenAt": TIMESTAMP,
            "forgottenBy": USER,
        },
    ),
    ItemKind("entry-revision", "WS#", "ENTRYREV#", {**KEY, **ENTRY_FIELDS}),
    ItemKind("entry-key", "WS#", "ENTRYKEY#", {**KEY, "entryId": ENTRY}),
    ItemKind("entry-counter", "WS#", "ENTRIES", {**KEY, "versions": INT, "entriesRevision": INT}),
    ItemKind("entry-key-secret", "WS#", "ENTRYSECRET", {**KEY, "ciphertext": SEALED}),
    ItemKind(
        "entry-candidate",
        "WS#",
        "ENTRYCAND#",
        {
            **KEY,
            "candidateId": ISSUED,
            "kind": enum_of(terms.CandidateKind),
            "revision": INT,
            "status": enum_of(terms.CandidateStatus),
            "scope": enum_of(terms.EntryScope),
            "scopeOwner": SCOPE_OWNER,
            "type": enum_of(terms.EntryType),
            "ciphertext": SEALED,
            "entryId": ENTRY,
            "baseRevision": INT,
            "proposedBy": USER,
            "admissionId": ISSUED,
            "createdAt": TIMESTAMP,
            "decidedBy": USER,
            "decidedAt": TIMESTAMP,
            "ttl": INT,
        },
    ),
    ItemKind("entry-rate", "WS#", "ENTRYRATE#", {**KEY, "writes": INT, "ttl": INT}),
    ItemKind(
        "entry-save",
        "WS#",
        "ENTRYSAVE#",
        {
            **KEY,
            "admissionId": ISSUED,
            "requestHash": HASH,
            "status": enum_of(("pending", "done")),
            "outcome": enum_of(terms.Outcome),
            "answer": map_of({"entryId": ENTRY, "revision": INT, "candidateId": ISSUED, "superseded": BOOL}),
            "createdAt": TIMESTAMP,
            "ttl": INT,
        },
    ),
    ItemKind(
        "search-snapshot",
        "WS#",
        "SEARCHSNAP#",
        {
            **KEY,
            "format": INT,
            "generation": id_of("generation", GENERATION),
            "entriesRevision": INT,
            "chunks": INT,
            "docs": INT,
            "bytes": INT,
            "sha256": HASH,
            "part": INT,
            "ciphertext": SEALED,
            "ttl": INT,
        },
    ),
    ItemKind("conversation", "CONV#", "OWNER", {**KEY, "workspaceId": ISSUED, "userId": USER, "createdAt": TIMESTAMP}),
    ItemKind(
        "credential-slot",
        "CONV#",
        "CREDENTIAL",
        {**KEY, "admissionId": ISSUED, "nonceHash": HASH, "workspaceId": ISSUED, "expiresAt": INT, "ttl": INT},
    ),
    ItemKind(
        "admission-key",
        "CONV#",
        "ADMKEY#",
        {**KEY, "admissionId": ISSUED, "workspaceId": ISSUED, "userId": USER, "ttl": INT},
    ),
    ItemKind(
        "receipt",
        "CONV#",
        "RECEIPT#",
        {
            **KEY,
            "admissionId": ISSUED,
            "workspaceId": ISSUED,
            "turnId": CALLER,
            "at": TIMESTAMP,
            "status": enum_of(terms.RecallStatus),
            "revision": INT,
            "entries": list_of(id_of("cited", CITED)),
            "selected": list_of(id_of("cited", CITED)),
            "ttl": INT,
        },
    ),
    ItemKind(
        "admission",
        "ADM#",
        "ADMISSION",
        {
            **KEY,
            "admissionId": ISSUED,
            "conversationId": CALLER,
            "workspaceId": ISSUED,
            "userId": USER,
            "mode": enum_of(terms.Mode),
            "policyRevision": INT,
            "clearGeneration": INT,
            "consentRevision": INT,
            "scopes": list_of(enum_of(terms.Scope)),
            "nonceHash": HASH,
            "credentialCiphertext": SEALED,
            "messageCiphertext": SEALED,
            "expiresAt": INT,
            "status": enum_of(("admitted", "committed")),
            "createdAt": TIMESTAMP,
            "keySessionId": ISSUED,
            "sessionId": CALLER,
            "memoryState": _MEMORY_STATE,
            "turnId": CALLER,
            "captureRequestHash": HASH,
            "captureReceipt": _RECEIPT,
            "ttl": INT,
        },
    ),
)

FINDINGS: dict[tuple[str, str], str] = {
    ("workspace", "name"): "the workspace's name, typed by its owner, is in clear (shown on every listing page)",
}
"""Every `CLEAR_TEXT` attribute, with why it is still in clear: what the classification tests expect."""


def kind_of(pk: str, sk: str) -> ItemKind | None:
    return next((kind for kind in KINDS if kind.matches(pk, sk)), None)


def violations(item: Mapping[str, object]) -> list[str]:
    """What in `item` is not declared, or not of its declared class: `kind.attribute: class` lines, no values."""
    pk, sk = str(item.get("pk", "")), str(item.get("sk", ""))
    kind = kind_of(pk, sk)
    if kind is None:
        return [f"{pk.split('#', 1)[0]}#…/{sk.split('#', 1)[0]}: undeclared item kind"]
    found = []
    for name, value in item.items():
        form = kind.attributes.get(name)
        if form is None:
            found.append(f"{kind.name}.{name}: undeclared attribute")
        elif not form.holds(value, item):
            found.append(f"{kind.name}.{name}: not {form.name} ({type(value).__name__})")
    return found
