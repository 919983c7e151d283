"""Citations judged on the list and in recall as a single read judges them (docs/decisions/0078), over the
in-memory table: an entry whose cited source is gone is hidden and counted, one whose cited text changed says
so, and judging reads (and decrypts) no more than it must."""

from __future__ import annotations

import hashlib

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, World, draft, make, snapshot
from workspace_memory.document.purge import PurgeService
from workspace_memory.document.retention import RetentionService
from workspace_memory.entries.citations import Citations, CitedDigests
from workspace_memory.entries.index import SOURCE_CHANGED, build_index, recall_sections
from workspace_memory.entries.model import Draft, Filters, Page, Source
from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.terms import CitationKind, CitationState, EntryScope, EntryType
from workspace_memory.store import keys

pytestmark = pytest.mark.unit

BODY = "We deploy on Fridays."


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def version_source(number: int, text: str) -> Source:
    return Source(CitationKind.DOCUMENT_VERSION, str(number), sha(text), "line 1")


def entry_source(entry_id: str, body: str = BODY) -> Source:
    return Source(CitationKind.ENTRY, entry_id, sha(body))


def listed(w: World, user: str = EDITOR, limit: int = 50) -> Page:
    return w.entries.list_entries(user, w.ws, Filters(), limit, None)


def states(w: World, user: str = EDITOR) -> dict[str, CitationState | None]:
    return {row.entry_id: row.source_state for row in listed(w, user).rows}


def index_text(w: World, user: str = EDITOR) -> str:
    return build_index(w.table, w.cipher, w.ws, user, now=w.clock.now()).text


def test_an_entry_citing_nothing_has_no_state_and_one_citing_what_holds_is_ok() -> None:
    w = make()
    plain = w.entries.create(EDITOR, w.ws, draft("plain"))
    cited = w.entries.create(EDITOR, w.ws, draft("cited", body=BODY))
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    citing = w.entries.create(
        EDITOR, w.ws, draft("citing", sources=(entry_source(cited.entry_id), version_source(1, "# doc\n")))
    )
    page = listed(w)
    assert page.hidden == 0
    assert states(w) == {plain.entry_id: None, cited.entry_id: None, citing.entry_id: CitationState.OK}
    assert SOURCE_CHANGED not in index_text(w)


def test_a_purged_cited_version_hides_the_citing_entry_from_the_list_and_the_index() -> None:
    w = make()
    w.documents.save(OWNER, w.ws, "# doc\n- a line to purge\n", 0)
    w.documents.save(OWNER, w.ws, "# doc\n", 1)
    citing = w.entries.create(EDITOR, w.ws, draft("citing", sources=(version_source(1, "# doc\n- a line to purge\n"),)))
    other = w.entries.create(EDITOR, w.ws, draft("other"))
    assert states(w)[citing.entry_id] is CitationState.OK
    PurgeService(w.table, w.cipher, w.clock).purge(OWNER, w.ws, "- a line to purge")
    page = listed(w)
    assert ([r.entry_id for r in page.rows], page.hidden) == ([other.entry_id], 1)
    index = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now())
    assert (index.recalled, index.hidden) == (((other.entry_id, 1),), 1)
    assert f"[{citing.entry_id}]" not in index.text
    # the single read still opens it, to show the person why it is hidden
    (citation,) = w.entries.read(EDITOR, w.ws, citing.entry_id).citations
    assert citation.state is CitationState.HIDDEN


def test_a_cited_version_past_its_retention_expires_the_citing_entry_at_that_second() -> None:
    w = make()
    RetentionService(w.table, w.clock).set(OWNER, w.ws, 1)
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    citing = w.entries.create(EDITOR, w.ws, draft("citing", sources=(version_source(1, "# doc\n"),)))
    w.documents.save(OWNER, w.ws, "# doc v2\n", 1)  # version 1's day starts now
    w.clock.advance(DAY_SECONDS - 1)
    assert citing.entry_id in states(w)
    w.clock.advance(1)
    assert keys.version(w.ws, 1) in w.table.items  # not deleted yet: gone by its ttl all the same
    assert (listed(w).rows, listed(w).hidden) == ([], 1)
    assert index_text(w) == ""


def test_a_deleted_cited_version_hides_the_citing_entry() -> None:
    w = make()
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    w.entries.create(EDITOR, w.ws, draft("citing", sources=(version_source(1, "# doc\n"),)))
    del w.table.items[keys.version(w.ws, 1)]  # what DynamoDB's TTL deleter does
    assert listed(w).hidden == 1


def test_a_superseded_cited_entry_is_changed_on_the_list_and_marked_in_recall() -> None:
    w = make()
    cited = w.entries.create(EDITOR, w.ws, draft("cited", body=BODY))
    citing = w.entries.create(EDITOR, w.ws, draft("citing", sources=(entry_source(cited.entry_id),)))
    rule_text = draft("a rule", sources=(entry_source(cited.entry_id),)).text
    rule = w.entries.create(OWNER, w.ws, Draft(EntryType.RULE, rule_text, EntryScope.WORKSPACE))
    w.entries.supersede(EDITOR, w.ws, cited.entry_id, draft("cited", body="We deploy on Mondays."), 1)
    assert states(w)[citing.entry_id] is CitationState.CHANGED
    assert states(w)[rule.entry_id] is CitationState.CHANGED
    sections = recall_sections(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now())
    assert f"- citing — deploy day {SOURCE_CHANGED} [{citing.entry_id}]" in sections.index.text.splitlines()
    assert f"- a rule — deploy day {SOURCE_CHANGED} [{rule.entry_id}]" in sections.rules.text.splitlines()
    # a new revision with the same body is not a change: the cited text still hashes the same
    w.entries.supersede(EDITOR, w.ws, cited.entry_id, draft("cited again", body=BODY), 2)
    assert states(w)[citing.entry_id] is CitationState.OK


def test_a_forgotten_or_private_cited_entry_hides_the_citing_one() -> None:
    w = make()
    cited = w.entries.create(EDITOR, w.ws, draft("cited", body=BODY))
    private = w.entries.create(EDITOR, w.ws, draft("mine", scope=EntryScope.MEMBER, body=BODY))
    by_private = w.entries.create(EDITOR, w.ws, draft("via private", sources=(entry_source(private.entry_id),)))
    citing = w.entries.create(EDITOR, w.ws, draft("citing", sources=(entry_source(cited.entry_id),)))
    assert states(w, EDITOR)[by_private.entry_id] is CitationState.OK  # its author sees what it cites
    assert by_private.entry_id not in states(w, VIEWER)
    assert listed(w, VIEWER).hidden == 1
    w.entries.forget(EDITOR, w.ws, cited.entry_id)
    assert citing.entry_id not in states(w, EDITOR)
    assert f"[{citing.entry_id}]" not in index_text(w)


def test_a_page_with_hidden_rows_holds_fewer_and_its_cursor_resumes_after_them() -> None:
    w = make()
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    made = [w.entries.create(EDITOR, w.ws, draft(f"e{i}")).entry_id for i in range(3)]
    made += [w.entries.create(EDITOR, w.ws, draft("gone", sources=(version_source(1, "# doc\n"),))).entry_id]
    made += [w.entries.create(EDITOR, w.ws, draft(f"f{i}")).entry_id for i in range(2)]
    del w.table.items[keys.version(w.ws, 1)]
    seen: list[str] = []
    hidden, cursor, pages = 0, None, 0
    while True:
        page = w.entries.list_entries(EDITOR, w.ws, Filters(), 2, cursor)
        assert len(page.rows) <= 2
        seen += [r.entry_id for r in page.rows]
        hidden += page.hidden or 0
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert (sorted(seen), hidden, pages) == (sorted(made[:3] + made[4:]), 1, 3)


def test_hidden_entries_take_no_index_line() -> None:
    w = make()
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    for i in range(3):
        w.entries.create(EDITOR, w.ws, draft(f"gone {i}", sources=(version_source(1, "# doc\n"),)))
    kept = [w.entries.create(EDITOR, w.ws, draft(f"kept {i}")).entry_id for i in range(2)]
    del w.table.items[keys.version(w.ws, 1)]
    index = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now(), max_lines=2)
    # entry id order: a hidden entry before the second kept one is skipped; one after the index is full is left
    # out unjudged (counted on the "more" line), as any entry past the budget is
    assert ({entry_id for entry_id, _ in index.recalled}, index.hidden + index.left_out) == (set(kept), 3)


def test_a_warm_judgement_decrypts_each_cited_text_once_and_reads_change_nothing() -> None:
    w = make()
    w.documents.save(OWNER, w.ws, "# doc\n", 0)
    cited = w.entries.create(EDITOR, w.ws, draft("cited", body=BODY))
    sources = (entry_source(cited.entry_id), version_source(1, "# doc\n"))
    for i in range(5):
        w.entries.create(EDITOR, w.ws, draft(f"citing {i}", sources=sources))
    digests = CitedDigests()
    citations = Citations(w.table, w.cipher, digests)
    before = snapshot(w)
    for _ in range(3):
        recall_sections(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now(), citations=citations)
    assert digests.computed == 2  # one entry body, one document version: once for the process
    assert listed(w).hidden == 0
    assert snapshot(w) == before
