"""The single-table key layout. Access patterns are documented in docs/data-model.md."""

from __future__ import annotations

Key = tuple[str, str]


def ws(workspace_id: str) -> str:
    return f"WS#{workspace_id}"


def meta(workspace_id: str) -> Key:
    return ws(workspace_id), "META"


MEMBER_PREFIX = "MEMBER#"


def member(workspace_id: str, user_id: str) -> Key:
    return ws(workspace_id), f"{MEMBER_PREFIX}{user_id}"


WORKSPACE_PREFIX = "WS#"


def workspace_of(pk: str) -> str:
    """The workspace id of a `WS#{ws}` partition key (a member item holds no `workspaceId`: see ByMember)."""
    return pk.removeprefix(WORKSPACE_PREFIX)


def policy(workspace_id: str) -> Key:
    return ws(workspace_id), "POLICY"


def consolidation(workspace_id: str) -> Key:
    """The owner's consolidation settings: opted in or not, and whether filing may apply unreviewed."""
    return ws(workspace_id), "CONSOLIDATION"


def consolidation_latest_run(workspace_id: str) -> Key:
    """The owner's latest on-demand consolidation run: one at a time, by compare-and-set on its revision."""
    return ws(workspace_id), "CONSOLIDATIONRUN"


def head(workspace_id: str) -> Key:
    return ws(workspace_id), "DOC#HEAD"


VERSION_PREFIX = "DOC#V#"


def version(workspace_id: str, number: int) -> Key:
    return ws(workspace_id), f"{VERSION_PREFIX}{number:012d}"


KEY_SESSION_PREFIX = "KEYSESSION#"


def key_session(workspace_id: str, session_id: str) -> Key:
    return ws(workspace_id), f"{KEY_SESSION_PREFIX}{session_id}"


def key_revocation(workspace_id: str, session_id: str) -> Key:
    return ws(workspace_id), f"KEYREVOKED#{session_id}"


def conv(conversation_id: str) -> str:
    return f"CONV#{conversation_id}"


def credential(conversation_id: str) -> Key:
    return conv(conversation_id), "CREDENTIAL"


def conversation_owner(conversation_id: str) -> Key:
    """Durable (no TTL): a conversation answers to its first admission's workspace and user for good."""
    return conv(conversation_id), "OWNER"


def admission_key(conversation_id: str, idempotency_key: str) -> Key:
    return conv(conversation_id), f"ADMKEY#{idempotency_key}"


def admission(admission_id: str) -> Key:
    return f"ADM#{admission_id}", "ADMISSION"


RECEIPT_PREFIX = "RECEIPT#"


def receipt(conversation_id: str, at_ms: int, admission_id: str, seq: str) -> Key:
    return conv(conversation_id), f"{RECEIPT_PREFIX}{at_ms:015d}#{admission_id}#{seq}"


NOTES_PREFIX = "NOTES#"


def notes(workspace_id: str, user_id: str, session_id: str) -> Key:
    """A user's notebook for one session of one workspace. Session ids hold no `#`, so the last `#` splits
    the user from the session unambiguously."""
    return ws(workspace_id), f"{NOTES_PREFIX}{user_id}#{session_id}"


ENTRY_PREFIX = "ENTRY#"
"""Entry heads only: revisions, keys and candidates use other prefixes, so one Query lists the heads."""


def entry(workspace_id: str, entry_id: str) -> Key:
    return ws(workspace_id), f"{ENTRY_PREFIX}{entry_id}"


ENTRY_REVISION_PREFIX = "ENTRYREV#"
"""Every revision of every chain of a workspace (search and the retention rewrite read them all)."""


def entry_revisions_prefix(entry_id: str) -> str:
    return f"{ENTRY_REVISION_PREFIX}{entry_id}#"


def entry_revision(workspace_id: str, entry_id: str, revision: int) -> Key:
    return ws(workspace_id), f"{entry_revisions_prefix(entry_id)}{revision:06d}"


def entry_key(workspace_id: str, key_hmac: str) -> Key:
    """Uniqueness of a key among a scope's active entries: the HMAC covers scope, scope owner and key."""
    return ws(workspace_id), f"ENTRYKEY#{key_hmac}"


FORGOTTEN_SOURCE_PREFIX = "ENTRYBLOCK#"
"""What forgotten chains drew on (a cited source, an agent's turn), by keyed hash: an agent's save meets none."""


def forgotten_source(workspace_id: str, slot: str) -> Key:
    """A source or admission a forgotten chain drew on, named by its HMAC under the entry key secret."""
    return ws(workspace_id), f"{FORGOTTEN_SOURCE_PREFIX}{slot}"


def entry_counter(workspace_id: str) -> Key:
    """The workspace's stored entry versions (the cap) and `entriesRevision` (bumped by every entry write)."""
    return ws(workspace_id), "ENTRIES"


SEARCH_SNAPSHOT_PREFIX = "SEARCHSNAP#"
"""The workspace's encrypted search-index snapshot: its pointer and every generation's chunks (one Query
finds them all, to remove them with a forget)."""


def search_snapshot(workspace_id: str) -> Key:
    """The pointer: which generation is current, at which `entriesRevision`, in how many chunks."""
    return ws(workspace_id), f"{SEARCH_SNAPSHOT_PREFIX}HEAD"


def search_snapshot_chunks_prefix(generation: str) -> str:
    return f"{SEARCH_SNAPSHOT_PREFIX}{generation}#"


def search_snapshot_chunk(workspace_id: str, generation: str, part: int) -> Key:
    return ws(workspace_id), f"{search_snapshot_chunks_prefix(generation)}{part:04d}"


def entry_secret(workspace_id: str) -> Key:
    """The workspace's HMAC secret for entry keys, sealed under its branch key."""
    return ws(workspace_id), "ENTRYSECRET"


CANDIDATE_PREFIX = "ENTRYCAND#"


def entry_candidate(workspace_id: str, candidate_id: str) -> Key:
    return ws(workspace_id), f"{CANDIDATE_PREFIX}{candidate_id}"


def entry_save(workspace_id: str, request_id: str) -> Key:
    """An agent's entry write by (admission, `Idempotency-Key`) (`request_id`: their SHA-256): its answer."""
    return ws(workspace_id), f"ENTRYSAVE#{request_id}"


def agent_rate(workspace_id: str, user_id: str, holder: str) -> Key:
    """The agent write window of one key session (`holder`: its id, or `-` for the user's own turns) of a user:
    the user last, so an erasure finds it by the key alone."""
    return ws(workspace_id), f"ENTRYRATE#{holder}#{user_id}"


AUDIT_PREFIX = "AUDIT#"
"""Audit events of the workspace, oldest first by sort key: epoch milliseconds (13 digits), then a random tail."""


def audit(workspace_id: str, at_ms: int, tail: str) -> Key:
    return ws(workspace_id), f"{AUDIT_PREFIX}{at_ms:013d}#{tail}"


def audit_bound(at_ms: int) -> str:
    """The sort key just before every event of millisecond `at_ms` (a range bound, never an item's key)."""
    return f"{AUDIT_PREFIX}{at_ms:013d}"


ERASURE_PREFIX = "ERASURE#"
"""Erasures of members of the workspace: each one's record, then its receipt (ids and counts only)."""


def erasure(workspace_id: str, erasure_id: str) -> Key:
    return ws(workspace_id), f"{ERASURE_PREFIX}{erasure_id}"


CONSOLIDATION_RUN_PREFIX = "CONSRUN#"
"""A consolidation run's record (ids and counts only): decisions/0086."""


def consolidation_run(workspace_id: str, run_id: str) -> Key:
    return ws(workspace_id), f"{CONSOLIDATION_RUN_PREFIX}{run_id}"


EXPORT_PREFIX = "EXPORT#"
"""A requested export of the workspace (its scope, requester, status): decisions/0068."""


def export(workspace_id: str, export_id: str) -> Key:
    return ws(workspace_id), f"{EXPORT_PREFIX}{export_id}"


EXPORT_PART_PREFIX = "EXPORTPART#"
"""The sealed files of every export: `EXPORTPART#{exportId}#{file}#{chunk:04d}` (one Query finds an export's)."""


def export_parts_prefix(export_id: str) -> str:
    return f"{EXPORT_PART_PREFIX}{export_id}#"


def export_part(workspace_id: str, export_id: str, file: str, chunk: int) -> Key:
    return ws(workspace_id), f"{export_parts_prefix(export_id)}{file}#{chunk:04d}"


IMPORT_PREFIX = "IMPORT#"
"""An archive being imported into the workspace (its source export, requester, status, counts): decisions/0069.
Its staged files are `EXPORTPART#{importId}#...` items, sealed under this workspace's key."""


def import_(workspace_id: str, import_id: str) -> Key:
    return ws(workspace_id), f"{IMPORT_PREFIX}{import_id}"


PAGE_PREFIX = "PAGE#"
"""Pages only (decisions/0085): a page's filings and the entries' filings use other prefixes, so one Query of
`PAGE#` lists the pages."""


def page(workspace_id: str, page_id: str) -> Key:
    return ws(workspace_id), f"{PAGE_PREFIX}{page_id}"


PAGE_ENTRY_PREFIX = "PAGEENTRY#"
"""The entries filed in a page: `PAGEENTRY#{pageId}#{entryId}` (one Query of a page's prefix lists them)."""


def page_entries_prefix(page_id: str) -> str:
    return f"{PAGE_ENTRY_PREFIX}{page_id}#"


def page_entry(workspace_id: str, page_id: str, entry_id: str) -> Key:
    return ws(workspace_id), f"{page_entries_prefix(page_id)}{entry_id}"


FILED_PREFIX = "FILED#"
"""An entry's filing, by entry: which page holds it (at most one: the item's key is the entry's)."""


def entry_filing(workspace_id: str, entry_id: str) -> Key:
    return ws(workspace_id), f"{FILED_PREFIX}{entry_id}"


def page_categories(workspace_id: str) -> Key:
    """The categories the workspace's owner added to the built-in ones, with their revision."""
    return ws(workspace_id), "PAGECATEGORIES"


def as_key(key: Key) -> dict[str, str]:
    return {"pk": key[0], "sk": key[1]}
