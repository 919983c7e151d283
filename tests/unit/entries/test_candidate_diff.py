"""A candidate's diff against the revision it would supersede (decision 0053)."""

from __future__ import annotations

from workspace_memory.entries.candidate_diff import candidate_diff
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.terms import EntryType


def test_a_candidate_diff_names_the_changed_fields_and_diffs_the_body() -> None:
    before = EntryText("Tone", "formal", "Be formal.\nNo emoji.")
    draft = Draft(EntryType.FACT, EntryText("Tone", "casual", "Be casual.\nNo emoji.", (), "style/tone"))

    diff = candidate_diff("en1", 3, True, EntryType.RULE, before, draft)

    assert (diff.entry_id, diff.revision, diff.current, diff.type, diff.body) == (
        "en1",
        3,
        True,
        EntryType.RULE,
        before.body,
    )
    assert diff.changed == ("type", "summary", "body")
    assert diff.body_diff.splitlines() == [
        "--- en1@3",
        "+++ candidate",
        "@@ -1,2 +1,2 @@",
        "-Be formal.",
        "+Be casual.",
        " No emoji.",
    ]
    same = candidate_diff("en1", 3, False, EntryType.RULE, before, Draft(EntryType.RULE, before))
    assert (same.changed, same.body_diff, same.current) == ((), "", False)
