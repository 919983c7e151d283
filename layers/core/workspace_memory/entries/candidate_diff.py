"""What accepting a save candidate would change (docs/architecture.md#candidates, decision 0053): the revision
it would supersede, that revision's text, which fields differ, and a unified diff of the body, so a person
decides on everything the candidate would store."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.terms import EntryType


@dataclass(frozen=True)
class CandidateDiff:
    entry_id: str
    revision: int
    """The revision accepting would supersede (the chain's head when the candidate was made)."""
    current: bool
    """Whether it still is the chain's head: accepting a candidate whose target moved on is `STALE_REVISION`."""
    type: EntryType
    title: str
    summary: str
    body: str
    changed: tuple[str, ...]
    """The fields the candidate changes, of `type`, `title`, `summary`, `body`, `sources`."""
    body_diff: str
    """`difflib.unified_diff` of the body lines, `{entryId}@{revision}` to `candidate` (empty: same body)."""


def candidate_diff(
    entry_id: str, revision: int, current: bool, before_type: EntryType, before: EntryText, draft: Draft
) -> CandidateDiff:
    after = draft.text
    pairs = {
        "type": (before_type.value, draft.type.value),
        "title": (before.title, after.title),
        "summary": (before.summary, after.summary),
        "body": (before.body, after.body),
        "sources": (before.sources, after.sources),
    }
    changed = tuple(field for field, (old, new) in pairs.items() if old != new)
    lines = difflib.unified_diff(
        before.body.splitlines(),
        after.body.splitlines(),
        fromfile=f"{entry_id}@{revision}",
        tofile="candidate",
        lineterm="",
    )
    return CandidateDiff(
        entry_id, revision, current, before_type, before.title, before.summary, before.body, changed, "\n".join(lines)
    )
