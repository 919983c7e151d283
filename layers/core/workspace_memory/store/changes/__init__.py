"""The domain's vocabulary of conditional writes: what one transaction may say, in the domain's own verbs.

A service composes a transaction from these changes ("create the version", "move the head from base",
"the member is still a writer", "consume the admission") and hands it to the table port; the adapters
translate each change into their storage's dialect (DynamoDB condition and update expressions in
`adapters/dynamo_changes.py`, plain Python in `tests/memory_table.py`). Every change carries a label; a
cancelled transaction names the labels whose condition failed, never list positions.

The verbs live beside the context they guard (`base`: labels and plain item writes, `document`, `workspace`,
`turns`, `entries`); this package is their one name: import them from `workspace_memory.store.changes`.
"""

from __future__ import annotations

from workspace_memory.store.changes.base import Create, Delete, Label, Put
from workspace_memory.store.changes.document import (
    DEFAULT_AGENT_DAYS,
    DEFAULT_HISTORY_DAYS,
    ExpireVersion,
    HeadAt,
    MoveHead,
    PurgeVersion,
    RetentionIs,
    SetRetention,
    TombstoneHead,
)
from workspace_memory.store.changes.entries import (
    BumpEntriesRevision,
    CountAgentWrite,
    CountEntryRead,
    CountEntryVersions,
    EntriesRevisionIs,
    EntryHeadIs,
    EntryNotPinned,
    ExpireAgentEntry,
    ExpireEntryRevision,
    ExpireSearchSnapshot,
    MarkEntryHead,
    MoveEntryHead,
    RetireEntryRevision,
    SourceNotForgotten,
    SupersedeEntryRevision,
    TakeKeySlot,
)
from workspace_memory.store.changes.erasure import CompleteErasure, CountErased, RemoveMember, RewriteAttributes
from workspace_memory.store.changes.exports import DownloadExport, ExportRunning, FinishExport
from workspace_memory.store.changes.imports import (
    Absent,
    ApplyImport,
    BeginImport,
    CompleteImport,
    EndImport,
    ImportHolds,
)
from workspace_memory.store.changes.pages import DeletePage, UnfileEntry
from workspace_memory.store.changes.turns import (
    AdmissionLive,
    ClaimConversation,
    ConsumeAdmission,
    CredentialHeldBy,
    KeySessionLive,
    KeySessionNotRevoked,
    ReplaceRevision,
)
from workspace_memory.store.changes.workspace import (
    BumpClearGeneration,
    ClearGenerationIs,
    ConsentIs,
    MemberCanWrite,
    MemberExists,
    MemberIsOwner,
    PolicyIs,
    SetAi,
    SetPolicyMode,
    TombstoneWorkspace,
    WorkspaceLive,
)

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
    | WorkspaceLive
    | TombstoneHead
    | MemberExists
    | MoveEntryHead
    | RetireEntryRevision
    | EntryHeadIs
    | MarkEntryHead
    | EntryNotPinned
    | SourceNotForgotten
    | SupersedeEntryRevision
    | ExpireEntryRevision
    | ExpireAgentEntry
    | TakeKeySlot
    | CountEntryVersions
    | BumpEntriesRevision
    | ExpireSearchSnapshot
    | CountAgentWrite
    | CountEntryRead
    | EntriesRevisionIs
    | RemoveMember
    | RewriteAttributes
    | CompleteErasure
    | CountErased
    | ExportRunning
    | FinishExport
    | DownloadExport
    | Absent
    | BeginImport
    | ImportHolds
    | ApplyImport
    | CompleteImport
    | EndImport
    | DeletePage
    | UnfileEntry
)

__all__ = [
    "DEFAULT_AGENT_DAYS",
    "DEFAULT_HISTORY_DAYS",
    "Absent",
    "AdmissionLive",
    "ApplyImport",
    "BeginImport",
    "BumpClearGeneration",
    "BumpEntriesRevision",
    "Change",
    "ClaimConversation",
    "ClearGenerationIs",
    "CompleteErasure",
    "CompleteImport",
    "ConsentIs",
    "ConsumeAdmission",
    "CountAgentWrite",
    "CountEntryRead",
    "CountEntryVersions",
    "CountErased",
    "Create",
    "CredentialHeldBy",
    "Delete",
    "DeletePage",
    "DownloadExport",
    "EndImport",
    "EntriesRevisionIs",
    "EntryHeadIs",
    "EntryNotPinned",
    "ExpireAgentEntry",
    "ExpireEntryRevision",
    "ExpireSearchSnapshot",
    "ExpireVersion",
    "ExportRunning",
    "FinishExport",
    "HeadAt",
    "ImportHolds",
    "KeySessionLive",
    "KeySessionNotRevoked",
    "Label",
    "MarkEntryHead",
    "MemberCanWrite",
    "MemberExists",
    "MemberIsOwner",
    "MoveEntryHead",
    "MoveHead",
    "PolicyIs",
    "PurgeVersion",
    "Put",
    "RemoveMember",
    "ReplaceRevision",
    "RetentionIs",
    "RetireEntryRevision",
    "RewriteAttributes",
    "SetAi",
    "SetPolicyMode",
    "SetRetention",
    "SourceNotForgotten",
    "SupersedeEntryRevision",
    "TakeKeySlot",
    "TombstoneHead",
    "TombstoneWorkspace",
    "UnfileEntry",
    "WorkspaceLive",
]
