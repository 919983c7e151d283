"""The attributes of review-inbox candidates and of consolidation's run records (declared as `attributes.py`
declares every other kind's, kept here for its length)."""

from __future__ import annotations

from workspace_memory.kernel import terms
from workspace_memory.store.attribute_forms import (
    ADMISSION,
    CITED_ENTRIES,
    ENTRY,
    INT,
    ISSUED,
    SCOPE_OWNER,
    SEALED,
    TIMESTAMP,
    USER,
    Form,
    enum_of,
)

CANDIDATE_FIELDS: dict[str, Form] = {
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
    "admissionId": ADMISSION,
    "createdAt": TIMESTAMP,
    "decidedBy": USER,
    "decidedAt": TIMESTAMP,
    "rejectedFor": enum_of(terms.RejectedFor),
    "keeperId": ENTRY,
    "keeperRevision": INT,
    "rule": enum_of(terms.ConsolidationRule),
    "runId": ISSUED,
    "possibleConflicts": CITED_ENTRIES,
    "ttl": INT,
}

RUN_FIELDS: dict[str, Form] = {
    "runId": ISSUED,
    "trigger": enum_of(("schedule", "owner")),
    "status": enum_of(terms.RunStatus),
    "startedAt": TIMESTAMP,
    "finishedAt": TIMESTAMP,
    "ttl": INT,
    **{name: INT for name in ("pairs", "judged", "proposed", "alreadyProposed", "stale", "left")},
}
