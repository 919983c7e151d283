"""The domain's vocabulary of conditional writes: what one transaction may say, in the domain's own verbs.

A service composes a transaction from these changes ("create the version", "move the head from base",
"the member is still a writer", "consume the admission") and hands it to the table port; the adapters
translate each change into their storage's dialect (DynamoDB condition and update expressions in
`adapters/dynamo_changes.py`, plain Python in `tests/memory_table.py`). Every change carries a label; a
cancelled transaction names the labels whose condition failed, never list positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workspace_memory.store import keys
from workspace_memory.store.ports import Item

DEFAULT_HISTORY_DAYS = 90
"""A workspace's retention when its item names none (docs/architecture.md#retention): non-head versions live 90 days."""


class Label:
    """Stable names for what a change stands for; several changes may share one (both key-session checks)."""

    VERSION = "version"
    HEAD = "head"
    ACCESS = "access"
    CLEAR_GENERATION = "clear_generation"
    POLICY = "policy"
    CONSENT = "consent"
    CREDENTIAL = "credential"
    ADMISSION = "admission"
    IDEMPOTENCY = "idempotency"
    OWNER = "owner"
    KEY_SESSION = "key_session"
    WORKSPACE = "workspace"
    NOTES = "notes"
    WRITE = "write"
    RETENTION = "retention"
    ENTRY = "entry"
    ENTRY_KEY = "entry_key"
    ENTRY_CAP = "entry_cap"
    RATE = "rate"
    CANDIDATE = "candidate"
    SEARCH_SNAPSHOT = "search_snapshot"


@dataclass(frozen=True)
class _ItemWrite:
    """A change that writes one whole item (under some condition)."""

    item: Item

    @property
    def key(self) -> keys.Key:
        return self.item["pk"], self.item["sk"]


@dataclass(frozen=True)
class Create(_ItemWrite):
    """Put `item`; fails if an item with its key exists (ids are never reused, versions never rewritten)."""

    label: str


@dataclass(frozen=True)
class Put(_ItemWrite):
    """Put `item` unconditionally, as part of the transaction (it stands or falls with the others)."""

    label: str = Label.WRITE


@dataclass(frozen=True)
class MoveHead(_ItemWrite):
    """Replace the document head by `item` iff it is at `base` and not a tombstone (absent iff `base` is 0)."""

    base: int
    label: str = Label.HEAD


@dataclass(frozen=True)
class MemberCanWrite:
    """The member still has write right when the write lands (false for a non-member). Member items carry
    `canWrite`, derived from role and share type when the membership is written, so the check needs no read
    of the workspace."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class BumpClearGeneration:
    """The policy half of a Clear: generation `seen` -> `seen + 1`, mode and revision kept (row created if
    absent, as `read_only` revision 0)."""

    workspace_id: str
    seen: int
    label: str = Label.CLEAR_GENERATION


@dataclass(frozen=True)
class ClearGenerationIs:
    """The clear generation is still `generation`; `None` means no policy row exists yet."""

    workspace_id: str
    generation: int | None
    label: str = Label.CLEAR_GENERATION


@dataclass(frozen=True)
class SetPolicyMode:
    """Compare-and-set the mode on the revision (`expected` 0 also matches a missing row); never touches the
    clear generation, which a Clear may bump concurrently."""

    workspace_id: str
    mode: str
    expected: int
    at: str
    by: str
    label: str = Label.POLICY


@dataclass(frozen=True)
class PolicyIs:
    """The policy still has the mode, revision and clear generation a turn was admitted under. Revision 0 is the
    default policy (`read_only`, no row yet): then the row must still be absent."""

    workspace_id: str
    mode: str
    revision: int
    clear_generation: int
    label: str = Label.POLICY


@dataclass(frozen=True)
class ConsentIs:
    """Workspace AI is still on, with the consent revision seen, and (when given) the retention seen: the
    fence's one check of the workspace item, which a transaction may touch only once."""

    workspace_id: str
    consent_revision: int
    history_days: int | None = None
    label: str = Label.CONSENT


@dataclass(frozen=True)
class SetAi:
    """Turn workspace AI on or off iff the consent revision is still `seen`; it becomes `seen + 1`."""

    workspace_id: str
    enabled: bool
    seen: int
    label: str = Label.CONSENT


@dataclass(frozen=True)
class CredentialHeldBy:
    """The conversation's credential slot still holds this admission's nonce, unexpired at `now`."""

    conversation_id: str
    admission_id: str
    nonce_hash: str
    now: int
    label: str = Label.CREDENTIAL


@dataclass(frozen=True)
class ConsumeAdmission:
    """Mark the admission committed (with the capture's request hash and receipt) iff it is still admitted,
    unexpired at `now`, admitted in `mode`, and for this workspace and user."""

    admission_id: str
    workspace_id: str
    user_id: str
    mode: str
    now: int
    request_hash: str
    receipt: dict[str, Any]
    label: str = Label.ADMISSION


@dataclass(frozen=True)
class AdmissionLive:
    """The admission is unexpired at `now`, admitted in `mode`, for this workspace and user, and not retired
    otherwise (`admitted`, or `committed` by the turn's one capture): an entry write does not consume it."""

    admission_id: str
    workspace_id: str
    user_id: str
    mode: str
    now: int
    label: str = Label.ADMISSION


@dataclass(frozen=True)
class ClaimConversation(_ItemWrite):
    """Write the conversation's owner record iff it is absent or already this workspace's and user's."""

    label: str = Label.OWNER


@dataclass(frozen=True)
class KeySessionLive:
    """The key session exists and is unexpired at `now`."""

    workspace_id: str
    key_session_id: str
    now: int
    label: str = Label.KEY_SESSION


@dataclass(frozen=True)
class KeySessionNotRevoked:
    """No durable revocation row exists for the key session."""

    workspace_id: str
    key_session_id: str
    label: str = Label.KEY_SESSION


@dataclass(frozen=True)
class Delete:
    """Delete the item at `key` unconditionally, absent or not (the purge of a deleted workspace; forgetting an
    entry's revisions). It never fails, so its label names nothing a cancellation could report."""

    key: keys.Key
    label: str = Label.WRITE


@dataclass(frozen=True)
class MemberIsOwner:
    """The member is still the workspace's owner when the write lands (false for anyone else)."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class TombstoneWorkspace:
    """Mark the workspace deleted iff it exists and is not deleted yet: `deletedAt`/`deletedBy` set, AI off and
    the consent revision bumped, so every admitted turn is retired by the fence it already has."""

    workspace_id: str
    by: str
    at: str
    label: str = Label.WORKSPACE


@dataclass(frozen=True)
class TombstoneHead:
    """Make the document head a tombstone (created as version 0 if the document was never saved): every
    `MoveHead` fails from then on, so no Save, Clear, Undo, apply or capture can land."""

    workspace_id: str
    label: str = Label.HEAD


@dataclass(frozen=True)
class ReplaceRevision(_ItemWrite):
    """Put `item` iff the stored item's `revision` is `expected` (absent iff `expected` is 0)."""

    expected: int
    label: str = Label.NOTES


@dataclass(frozen=True)
class HeadAt:
    """The document head is still at `version` and not a tombstone."""

    workspace_id: str
    version: int
    label: str = Label.HEAD


@dataclass(frozen=True)
class RetentionIs:
    """The workspace's `historyDays` is still `history_days` (missing reads as `DEFAULT_HISTORY_DAYS`), so a
    version superseded now expires exactly as the retention in force says."""

    workspace_id: str
    history_days: int
    label: str = Label.RETENTION


@dataclass(frozen=True)
class SetRetention:
    """Set the workspace's `historyDays` (the workspace must exist)."""

    workspace_id: str
    history_days: int
    label: str = Label.RETENTION


@dataclass(frozen=True)
class ExpireVersion:
    """Give version `version` its expiry: `ttl` (epoch seconds, DynamoDB's TTL attribute) and `supersededAt`,
    iff the version exists and has not already expired at `now` (an expired version is gone for good, even
    before DynamoDB deletes it)."""

    workspace_id: str
    version: int
    ttl: int
    superseded_at: str
    now: int
    label: str = Label.VERSION


@dataclass(frozen=True)
class PurgeVersion:
    """Turn version `version` into a stub: its ciphertext removed, `purgedAt` and `purgedBy` set, iff it
    exists (a version DynamoDB already deleted is never recreated as a stub)."""

    workspace_id: str
    version: int
    at: str
    by: str
    label: str = Label.VERSION


@dataclass(frozen=True)
class MemberExists:
    """The user is still a member of the workspace (any role) when the write lands."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class MoveEntryHead(_ItemWrite):
    """Replace an entry's head by `item` iff it is at revision `base` and still `active` (a forgotten chain
    never moves again); two writers from one base: exactly one wins, so a chain never forks."""

    base: int
    label: str = Label.ENTRY


@dataclass(frozen=True)
class SupersedeEntryRevision:
    """Mark revision `revision` of an entry superseded by `by` (with the reason, time and retention `ttl`)
    iff it exists."""

    workspace_id: str
    entry_id: str
    revision: int
    by: int
    at: str
    ttl: int
    reason: str | None
    label: str = Label.ENTRY


@dataclass(frozen=True)
class ExpireEntryRevision:
    """Give superseded revision `revision` of an entry the expiry `ttl` a retention change implies, iff it
    exists, is superseded and has not already expired at `now` (a longer retention never revives one)."""

    workspace_id: str
    entry_id: str
    revision: int
    ttl: int
    now: int
    label: str = Label.ENTRY


@dataclass(frozen=True)
class CountEntryVersions:
    """Add `delta` to the workspace's stored entry versions and bump its `entriesRevision`, iff the count stays
    at most `cap` (the item is created on first use)."""

    workspace_id: str
    delta: int
    cap: int
    label: str = Label.ENTRY_CAP


@dataclass(frozen=True)
class CountAgentWrite:
    """One more agent write in this hour's bucket of (workspace, user), iff fewer than `limit` were made; the
    bucket expires (`ttl`) after its hour."""

    workspace_id: str
    user_id: str
    bucket: int
    limit: int
    ttl: int
    label: str = Label.RATE


@dataclass(frozen=True)
class CountEntryRead:
    """One more read of an active entry head (`readCount`, `lastReadAt`); a forgotten or missing one is left."""

    workspace_id: str
    entry_id: str
    at: str
    label: str = Label.ENTRY


@dataclass(frozen=True)
class EntriesRevisionIs:
    """The workspace's `entriesRevision` is still `revision` (nothing was written or forgotten since): a search
    snapshot built at that revision may be stored, never one that could hold a since-forgotten entry."""

    workspace_id: str
    revision: int
    label: str = Label.SEARCH_SNAPSHOT


Change = (
    Create
    | Put
    | MoveHead
    | MemberCanWrite
    | BumpClearGeneration
    | ClearGenerationIs
    | SetPolicyMode
    | PolicyIs
    | ConsentIs
    | SetAi
    | CredentialHeldBy
    | ConsumeAdmission
    | AdmissionLive
    | ClaimConversation
    | KeySessionLive
    | KeySessionNotRevoked
    | ReplaceRevision
    | MemberIsOwner
    | HeadAt
    | RetentionIs
    | SetRetention
    | ExpireVersion
    | PurgeVersion
    | Delete
    | TombstoneWorkspace
    | TombstoneHead
    | MemberExists
    | MoveEntryHead
    | SupersedeEntryRevision
    | ExpireEntryRevision
    | CountEntryVersions
    | CountAgentWrite
    | CountEntryRead
    | EntriesRevisionIs
)
