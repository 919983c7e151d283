"""What a refused entry transaction answers, read from the labels of the changes that failed: the turn's
authority for a fenced agent write (`Fenced`), then access, a forgotten source, the rate, the cap, a candidate
or the retention moved on, and last the head as the transaction judged it."""

from __future__ import annotations

from workspace_memory.entries.limits import Limits, RateRaced
from workspace_memory.kernel.errors import (
    Conflict,
    EntryCap,
    EntryPinned,
    Forbidden,
    SourceForgotten,
    WorkspaceNotFound,
)
from workspace_memory.store.changes import Label
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.store.stale import pinned_entry, stale_entry
from workspace_memory.workspaces.access import Caller, load_caller

FENCE_LABELS = frozenset(
    {Label.ADMISSION, Label.POLICY, Label.CONSENT, Label.CREDENTIAL, Label.KEY_SESSION, Label.ACCESS, Label.IDEMPOTENCY}
)
"""What an agent's fenced write can fail on beside the entry's own conditions: the turn's authority."""


class Fenced(Exception):
    """A fenced write's transaction failed on the turn's authority: `failed` names the labels; the caller
    (the agent's save) answers with the predicate."""

    def __init__(self, failed: frozenset[str]) -> None:
        super().__init__(", ".join(sorted(failed)))
        self.failed = failed


def refusal(
    table: Table,
    limits: Limits,
    caller: Caller,
    refused: TransactionCancelled,
    entry_id: str | None,
    *,
    fenced: bool = False,
    agent: bool = False,
) -> Exception:
    """The error a refused entry write raises (`entry_id`: the chain whose head it moved, if any; `agent`: an
    agent's text, which a pin refuses)."""
    workspace_id, failed = caller.workspace.id, refused.failed()
    if fenced and failed & FENCE_LABELS:
        return Fenced(failed & FENCE_LABELS)
    if Label.ACCESS in failed:
        try:
            load_caller(table, workspace_id, caller.user_id)
        except WorkspaceNotFound as exc:
            return exc
        return Forbidden("write access to this workspace's memory is not granted to your role")
    if Label.SOURCE_FORGOTTEN in failed:
        return SourceForgotten("a forgotten entry drew on a source or the turn this save comes from; nothing saved")
    if Label.RATE in failed:  # judged again on a fresh read of the window (`Limits.rated`)
        return RateRaced("the agent write window changed concurrently; try again")
    if Label.ENTRY_CAP in failed:
        cap = limits.version_cap
        return EntryCap(f"{cap} entry versions are stored in this scope, its cap", limit=cap)
    if Label.CANDIDATE in failed:
        return Conflict("the candidate was decided or changed concurrently")
    if Label.RETENTION in failed:
        return Conflict("the workspace's retention changed concurrently; try again")
    if Label.PINNED in failed:
        return EntryPinned("the entry is pinned: agents may read it, not propose over it")
    if agent and entry_id is not None and (pinned := pinned_entry(refused, workspace_id, entry_id)) is not None:
        return pinned
    if entry_id is not None and (stale := stale_entry(refused, workspace_id, entry_id)) is not None:
        return stale  # the head as the transaction judged it, not a read after it
    return Conflict("the entry changed concurrently; try again")
