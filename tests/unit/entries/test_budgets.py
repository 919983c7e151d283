"""The entry list's report of recall's budgets (issue 21, the Wuu seed's `list`): what the caller's turns are
given of the rules block and the index, as counts, with their limits and what was left out; never text."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, VIEWER, draft, make
from workspace_memory.document.versions import utf8_size
from workspace_memory.entries.index import INDEX_MAX_BYTES, INDEX_MAX_LINES, RULES_MAX_BYTES, recall_sections
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.errors import WorkspaceNotFound
from workspace_memory.kernel.terms import EntryScope, EntryType

pytestmark = pytest.mark.unit


def test_the_budgets_count_what_recall_gives_the_caller_and_what_it_left_out() -> None:
    w = make()
    for n in range(60):  # about 330 bytes a line: the index's 8,000 bytes cut it before its 100 lines
        w.entries.create(EDITOR, w.ws, draft("T" * 118 + f"{n:02d}", summary="s" * 199))
    w.entries.create(EDITOR, w.ws, Draft(EntryType.RULE, EntryText("Tone", "be brief", "")))
    w.entries.create(VIEWER, w.ws, draft("Private of vera", scope=EntryScope.MEMBER))

    rules, index = w.entries.recall_budgets(EDITOR, w.ws)

    sections = recall_sections(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now())  # what a recall would inject
    assert (rules.lines, rules.bytes, rules.left_out, rules.truncated) == (1, utf8_size(sections.rules.text), 0, False)
    assert (rules.max_bytes, rules.max_lines) == (RULES_MAX_BYTES, None)
    assert index.lines == len(sections.index.recalled) < 60
    assert (index.left_out, index.truncated) == (60 - index.lines, True)  # the rule is in its own block
    assert index.bytes == utf8_size(sections.index.text) <= INDEX_MAX_BYTES
    assert (index.max_bytes, index.max_lines) == (INDEX_MAX_BYTES, INDEX_MAX_LINES)
    _, hers = w.entries.recall_budgets(VIEWER, w.ws)
    assert hers.lines + hers.left_out == 61  # her own private entry counts for her, never for the editor


def test_an_empty_workspace_spends_nothing_and_a_stranger_learns_nothing() -> None:
    w = make()
    rules, index = w.entries.recall_budgets(EDITOR, w.ws)
    assert (rules.lines, rules.bytes, rules.truncated, index.lines, index.bytes, index.truncated) == (
        0,
        0,
        False,
        0,
        0,
        False,
    )
    with pytest.raises(WorkspaceNotFound):
        w.entries.recall_budgets("stranger", w.ws)
