"""The curated guard mutants of the entries context (issue 17, finding 13), beside the fence's in
`mutation_guards.py`; `scripts/mutation.py` runs both lists."""

from __future__ import annotations

from scripts.mutation_guards import CORE, Curated

# -- entries, candidates, search, redaction, retention, forget (issue 17, finding 13) ------------------------
# Each held by an HTTP test through the local gateway (`entry_guards`), except the forget proposal's fence,
# which only an event between the authority read and the transaction reaches (the in-process fence matrix).

ENTRY_GUARDS = "tests/integration/entries/test_entry_guards.py"
ENTRY_MATRIX = "tests/integration/entries/test_entry_fence_matrix.py"
AGENT_ENTRIES = "tests/integration/entries/test_agent_entry_api.py"
READS = CORE + "entries/reads.py"
CANDIDATES = CORE + "entries/candidates.py"
FORGET = CORE + "entries/forget.py"
VALIDATION = CORE + "entries/validation.py"
AS_OF_EXACT = ENTRY_GUARDS + "::test_as_of_the_exact_moment_a_revision_was_replaced_answers_the_newer_one"
AS_OF_RETAINED = ENTRY_GUARDS + "::test_as_of_never_answers_a_revision_past_its_retention"
DECIDED = ENTRY_GUARDS + "::test_a_decided_candidate_cannot_be_decided_again_at_its_new_revision"
PRIVATE_CANDIDATE = ENTRY_GUARDS + "::test_another_members_private_candidate_is_neither_listed_nor_decidable"
REDACTED = ENTRY_GUARDS + "::test_an_agents_summary_body_and_source_locators_are_stored_redacted"
FORGET_FENCE = (
    ENTRY_MATRIX + "::test_the_fence_itself_refuses_a_forget_proposal_when_the_member_loses_access_after_the_snapshot"
)

ENTRY_CURATED = [
    Curated(
        "citation: document version past its retention",
        CORE + "entries/citations.py",
        "version is None or version.expired(now) or",
        "version is None or version.expired(0.0) or",
        (ENTRY_GUARDS + "::test_a_citation_of_a_document_version_past_its_retention_is_hidden",),
    ),
    Curated(
        "asOf: a revision ends when it is replaced (read, list)",
        READS,
        "(end is None or at < epoch_time(end))",
        "(end is None or at <= epoch_time(end))",
        (AS_OF_EXACT,),
    ),
    Curated(
        "asOf: a revision ends when it is replaced (search)",
        CORE + "search/columns.py",
        "return (self.valid_from <= at) & (at < self.valid_to)",
        "return (self.valid_from <= at) & (at <= self.valid_to)",
        (AS_OF_EXACT,),
    ),
    Curated(
        "asOf: no revision past its retention (read, list)",
        READS,
        "if not record.expired(now) and _valid_at(record, at):",
        "if _valid_at(record, at):",
        (AS_OF_RETAINED,),
    ),
    Curated(
        "asOf: no revision past its retention (search index)",
        CORE + "search/entry_search.py",
        "return [m for m in listed if not m.expired(now)]",
        "return [m for m in listed if not m.expired(now) or True]",
        (AS_OF_RETAINED,),
    ),
    Curated(
        "history: a forgotten chain is gone (410)",
        READS,
        "        self.live_head(caller, head_of(found))\n        page, next_cursor",
        "        self.visible_head(caller, head_of(found))\n        page, next_cursor",
        (ENTRY_GUARDS + "::test_the_history_of_a_forgotten_chain_is_gone_not_empty",),
    ),
    Curated(
        "candidate decision: still pending",
        CANDIDATES,
        "if found.status is not CandidateStatus.PENDING or found.revision != revision:",
        "if found.revision != revision:",
        (DECIDED,),
    ),
    Curated(
        "candidate list: pending only",
        CANDIDATES,
        "if record.status is not CandidateStatus.PENDING or record.expired(now):",
        "if record.expired(now):",
        (AGENT_ENTRIES + "::test_a_forget_proposal_rejected_leaves_the_entry_intact",),
    ),
    Curated(
        "candidate: a member's own is theirs alone",
        CORE + "entries/scopes.py",
        "        return candidate.scope_owner == caller.user_id",
        "        return caller.can_write",
        (PRIVATE_CANDIDATE,),
    ),
    Curated(
        "candidate list: visibility",
        CANDIDATES,
        "            if not candidate_visible(caller, record):",
        "            if False:",
        (PRIVATE_CANDIDATE,),
    ),
    Curated(
        "candidate decision: visibility",
        CANDIDATES,
        "or not candidate_visible(caller, found):",
        "or False:",
        (PRIVATE_CANDIDATE,),
    ),
    Curated(
        "forget_member: the owner only",
        FORGET,
        "        caller.require_owner()\n",
        "",
        (ENTRY_GUARDS + "::test_only_the_owner_may_forget_a_members_entries_even_when_there_are_none",),
    ),
    Curated(
        "forget: revisions past the first batch of 90",
        FORGET,
        "for batch in rest:",
        "for batch in rest[:0]:",
        (ENTRY_GUARDS + "::test_forgetting_a_chain_longer_than_one_batch_leaves_no_revision",),
    ),
    Curated(
        "forget_memory fence: write right in auto",
        CORE + "entries/agent_entries.py",
        "*authority_checks(authority, now, adm.mode, writer=auto),",
        "*authority_checks(authority, now, adm.mode, writer=False),",
        (FORGET_FENCE + "[auto-member demoted]", FORGET_FENCE + "[auto-member removed]"),
    ),
    Curated(
        "forget_memory fence: membership in read_only",
        CANDIDATES,
        "*([MemberExists(workspace_id, user_id)] if member_check else []),",
        "*([]),",
        (FORGET_FENCE + "[read_only-member removed]",),
    ),
    Curated(
        "redaction: an agent's summary",
        VALIDATION,
        "summary=parts[1].text",
        "summary=draft.text.summary",
        (REDACTED,),
    ),
    Curated(
        "redaction: an agent's body",
        VALIDATION,
        "body=parts[2].text",
        "body=draft.text.body",
        (REDACTED,),
    ),
    Curated(
        "redaction: source locators",
        VALIDATION,
        "locator=redact(s.locator).text",
        "locator=s.locator",
        (REDACTED,),
    ),
    Curated(
        "entry visibility: a member's entry is theirs alone",
        CORE + "entries/scopes.py",
        "return record.scope is not EntryScope.MEMBER or record.scope_owner == user_id",
        "return True",
        ("tests/integration/entries/test_entries.py::test_citations_are_rechecked_on_every_read",),
    ),
    Curated(
        "search visibility: a member's entry is theirs alone",
        CORE + "search/entry_search.py",
        "mask: Mask = (columns.scope != EntryScope.MEMBER.value) | (columns.owner == caller.user_id)",
        "mask: Mask = columns.everything()",
        (
            "tests/integration/search/test_search_routes.py::test_a_members_private_entry_never_surfaces_for_another_member",
        ),
    ),
    Curated(
        "purge: the owner only (nothing to purge)",
        CORE + "document/purge.py",
        "        caller.require_owner()\n",
        "",
        ("tests/integration/document/test_purge.py::test_a_refused_purge_changes_nothing[an editor, a line nowhere]",),
    ),
]
