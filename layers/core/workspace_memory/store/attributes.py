"""Every attribute every item kind of the table may carry, and its class (decisions/0055): an id of a declared
format, a `kernel/terms` enumeration, a number, a timestamp, a hash, or bytes sealed under the workspace's branch
key; free text a person or an agent wrote is sealed, never an attribute of its own. `violations` judges one item
(strings, numbers, bytes, lists, maps) against this declaration; the classification tests scan whole tables with
it. It names kinds, attributes and classes, never a value. An attribute in clear not of a declared format would
be `CLEAR_TEXT`, its reason in `FINDINGS`; there is none (decision 0072 sealed the names)."""

from __future__ import annotations

from collections.abc import Mapping

from workspace_memory.kernel import terms
from workspace_memory.store.attribute_forms import (
    ADMISSION,
    BOOL,
    BRANCH_KEY_ID,
    CALLER,
    CITED_ENTRIES,
    ENTRY,
    GENERATION,
    HASH,
    INT,
    ISSUED,
    KEY,
    SCOPE_OWNER,
    SEALED,
    TIMESTAMP,
    USER,
    WRITE_TIMES,
    Form,
    ItemKind,
    enum_of,
    id_of,
    list_of,
    map_of,
)
from workspace_memory.store.candidate_attributes import CANDIDATE_FIELDS, RUN_FIELDS
from workspace_memory.store.consolidation_attributes import CONSOLIDATION_KINDS
from workspace_memory.store.export_attributes import EXPORT_KINDS
from workspace_memory.store.page_attributes import PAGE_KINDS

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
    "admissionId": ADMISSION,
    "keyLookup": HASH,
    "keySlot": HASH,
    "supersededAt": TIMESTAMP,
    "supersededBy": INT,
    "ttl": INT,
    "sourceSlots": list_of(HASH),
    "supersededByEntry": ENTRY,
}


_DOC_OP = enum_of(("save", "clear", "undo", "capture"))
_RECEIPT = map_of(
    {"admissionId": ADMISSION, "version": INT, "ciphertextSha256": HASH, "bytes": INT, "committedAt": TIMESTAMP}
)
_TARGET_ID = Form("id:target", lambda v, i: USER.holds(v, i) or ADMISSION.holds(v, i))
"""An audit target's id: a version number, an entry, candidate, key session, notes session, member or turn id."""
_MEMORY_STATE = map_of({"state": enum_of(("saved", "pending", "conflict")), "version": INT})

KINDS: tuple[ItemKind, ...] = (
    ItemKind(
        "workspace",
        "WS#",
        "META",
        {
            **KEY,
            "workspaceId": ISSUED,
            "nameCiphertext": SEALED,
            "ownerId": USER,
            "shareType": enum_of(terms.ShareType),
            "aiEnabled": BOOL,
            "consentRevision": INT,
            "branchKeyId": id_of("branch-key", BRANCH_KEY_ID),
            "historyDays": INT,
            "agentDays": INT,
            "createdAt": TIMESTAMP,
            "deletedAt": TIMESTAMP,
            "deletedBy": USER,
            "importingId": ISSUED,
        },
    ),
    ItemKind(
        "member",
        "WS#",
        "MEMBER#",
        {**KEY, "userId": USER, "role": enum_of(terms.Role), "canWrite": BOOL, "updatedAt": TIMESTAMP},
    ),
    ItemKind(
        "policy",
        "WS#",
        "POLICY",
        {
            **KEY,
            "mode": enum_of(terms.Mode),
            "policyRevision": INT,
            "clearGeneration": INT,
            "updatedAt": TIMESTAMP,
            "updatedBy": USER,
        },
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
            "admissionId": ADMISSION,
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
            "bindScopes": list_of(enum_of(terms.EntryScope)),
            "bindTypes": list_of(enum_of(terms.EntryType)),
            "bindKeyPrefixes": SEALED,
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
            "admissionId": ADMISSION,
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
            "pinned": BOOL,
            "verifiedAt": TIMESTAMP,
            "verifiedBy": USER,
            "verifiedEvidence": INT,
            "forgottenAt": TIMESTAMP,
            "forgottenBy": USER,
            "blockedSources": INT,
        },
    ),
    ItemKind("entry-revision", "WS#", "ENTRYREV#", {**KEY, **ENTRY_FIELDS}),
    ItemKind("entry-key", "WS#", "ENTRYKEY#", {**KEY, "entryId": ENTRY}),
    ItemKind("forgotten-source", "WS#", "ENTRYBLOCK#", {**KEY, "entryId": ENTRY, "blockedAt": TIMESTAMP, "ttl": INT}),
    # `versions#{userId}`: a member's private versions, counted for that member alone (the per-member cap)
    ItemKind("entry-counter", "WS#", "ENTRIES", {**KEY, "versions": INT, "versions#": INT, "entriesRevision": INT}),
    ItemKind("entry-key-secret", "WS#", "ENTRYSECRET", {**KEY, "ciphertext": SEALED}),
    ItemKind("entry-candidate", "WS#", "ENTRYCAND#", {**KEY, **CANDIDATE_FIELDS}),
    ItemKind("entry-rate", "WS#", "ENTRYRATE#", {**KEY, "window": WRITE_TIMES, "writes": INT, "ttl": INT}),
    ItemKind(
        "entry-save",
        "WS#",
        "ENTRYSAVE#",
        {
            **KEY,
            "admissionId": ADMISSION,
            "requestHash": HASH,
            "answer": map_of(
                {
                    "outcome": enum_of(terms.Outcome),
                    "entryId": ENTRY,
                    "revision": INT,
                    "candidateId": ISSUED,
                    "superseded": BOOL,
                    "possibleConflicts": CITED_ENTRIES,
                }
            ),
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
            "complete": BOOL,  # false while an owner's reindex is still adding revisions
            "part": SEALED,  # a chunk's bytes: one slice of the snapshot's single sealed message
            "ttl": INT,
        },
    ),
    ItemKind("conversation", "CONV#", "OWNER", {**KEY, "workspaceId": ISSUED, "userId": USER, "createdAt": TIMESTAMP}),
    ItemKind(
        "credential-slot",
        "CONV#",
        "CREDENTIAL",
        {**KEY, "admissionId": ADMISSION, "nonceHash": HASH, "workspaceId": ISSUED, "expiresAt": INT, "ttl": INT},
    ),
    ItemKind(
        "admission-key",
        "CONV#",
        "ADMKEY#",
        {**KEY, "admissionId": ADMISSION, "workspaceId": ISSUED, "userId": USER, "ttl": INT},
    ),
    ItemKind(
        "receipt",
        "CONV#",
        "RECEIPT#",
        {
            **KEY,
            "admissionId": ADMISSION,
            "workspaceId": ISSUED,
            "turnId": CALLER,
            "at": TIMESTAMP,
            "status": enum_of(terms.RecallStatus),
            "revision": INT,
            "entries": CITED_ENTRIES,
            "selected": CITED_ENTRIES,
            "ttl": INT,
        },
    ),
    ItemKind(
        "admission",
        "ADM#",
        "ADMISSION",
        {
            **KEY,
            "admissionId": ADMISSION,
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
    ItemKind(
        "audit",
        "WS#",
        "AUDIT#",
        {
            **KEY,
            "kind": enum_of(terms.AuditKind),
            "op": enum_of(terms.AuditOp, terms.Role, terms.Mode),
            "actor": USER,
            "actorKind": enum_of(terms.ActorKind),
            "admissionId": ADMISSION,
            "keySession": ISSUED,
            "targets": list_of(map_of({"kind": enum_of(terms.AuditKind), "id": _TARGET_ID, "version": INT})),
            "atMs": INT,
            "ttl": INT,
        },
    ),
    ItemKind(
        "erasure",
        "WS#",
        "ERASURE#",
        {
            **KEY,
            "erasureId": ISSUED,
            "pseudonym": USER,
            "requestedBy": USER,
            "requester": HASH,
            "requestedAt": TIMESTAMP,
            "subject": USER,
            "status": enum_of(("running", "completed")),
            "completedAt": TIMESTAMP,
            "deleted#": INT,
            "pseudonymized#": INT,
        },
    ),
    *EXPORT_KINDS,
    ItemKind("consolidation-run", "WS#", "CONSRUN#", {**KEY, **RUN_FIELDS}),
    *CONSOLIDATION_KINDS,
    *PAGE_KINDS,
)

FINDINGS: dict[tuple[str, str], str] = {}
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
        form = kind.form(name)
        if form is None:
            found.append(f"{kind.name}.{name}: undeclared attribute")
        elif not form.holds(value, item):
            found.append(f"{kind.name}.{name}: not {form.name} ({type(value).__name__})")
    return found
