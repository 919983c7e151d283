"""Consolidation's steps as the service runs them (docs/decisions/0086), called by the consolidation workflow's
activities through the automation routes, and the owner's view of its runs.

A run never writes an entry. It finds pairs (`consolidation/pairs.py`), the worker has a model judge each, and
what the judge confirms becomes a candidate in the review inbox, with its evidence: the two chains at the
revisions read and the rule applied. A person accepts (the older chain is retired into the newer: superseded,
never deleted) or rejects (nothing changes). A proposal's id is a function of what it read, so a repeated or
resumed run proposes nothing twice and puts no pair to the model again while its proposal lives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from workspace_memory.consolidation.contract import MAX_JUDGED_PAIRS, RunTrigger
from workspace_memory.consolidation.pairs import Pair, candidate_id, find_pairs
from workspace_memory.entries.candidates import CANDIDATE_TTL_SECONDS
from workspace_memory.kernel.clock import DAY_SECONDS, Clock, iso
from workspace_memory.kernel.errors import InvalidInput, WorkspaceNotFound
from workspace_memory.kernel.terms import (
    CONSOLIDATION_AUTHOR,
    CandidateKind,
    CandidateStatus,
    ConsolidationRule,
    EntryStatus,
    RunStatus,
)
from workspace_memory.search.claims import Relation
from workspace_memory.search.entry_search import SearchService
from workspace_memory.store import consolidation_runs, keys
from workspace_memory.store.changes import Create, Label, Put
from workspace_memory.store.consolidation_records import ConsolidationSettings
from workspace_memory.store.consolidation_runs import RunCounts, RunRecord
from workspace_memory.store.entry_records import CandidateRecord, EntryRecord, head_of
from workspace_memory.store.paging import get_all
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.store.search_records import entries_revision
from workspace_memory.store.workspace_records import is_deleted, is_importing
from workspace_memory.workspaces.access import load_caller
from workspace_memory.workspaces.import_errors import WorkspaceImporting

RUN_TTL_SECONDS = 90 * DAY_SECONDS
"""How long a run record lives: long enough to compare a quarter of nightly runs."""
KINDS = {Relation.DUPLICATE: CandidateKind.MERGE, Relation.CONFLICT: CandidateKind.SUPERSEDE}
RULES = {
    Relation.DUPLICATE: ConsolidationRule.DUPLICATE_NEWER_KEPT,
    Relation.CONFLICT: ConsolidationRule.CONFLICT_NEWER_WINS,
}


@dataclass(frozen=True)
class Verdict:
    """The judge's word on one pair, as the worker sends it back: ids, revisions and a relation."""

    retired_id: str
    retired_revision: int
    kept_id: str
    kept_revision: int
    relation: Relation


@dataclass(frozen=True)
class PairsFound:
    pairs: list[Pair]
    counts: RunCounts


class ConsolidationService:
    def __init__(self, table: Table, clock: Clock, search: SearchService) -> None:
        self._table = table
        self._clock = clock
        self._search = search

    def pairs(self, workspace_id: str, run_id: str, trigger: str) -> PairsFound:
        """The run's pairs to judge, at most `MAX_JUDGED_PAIRS`, none an earlier proposal already names; records
        the run as started (once: a resumed run keeps its start)."""
        meta, counter, settings = self._table.get_many(
            [keys.meta(workspace_id), keys.entry_counter(workspace_id), keys.consolidation(workspace_id)]
        )
        if meta is None or is_deleted(meta):
            raise WorkspaceNotFound("workspace not found")  # deleted since the run was asked for: nothing to read
        if is_importing(meta):
            raise WorkspaceImporting("the workspace is being filled from an archive; consolidate it after")
        now = self._clock.now()
        try:
            started = RunRecord(run_id, trigger, RunStatus.RUNNING, iso(now), int(now) + RUN_TTL_SECONDS)
            self._table.transact([Create(started.to_item(workspace_id), Label.CONSOLIDATION)])
        except TransactionCancelled:
            pass  # resumed: the run record stands
        if trigger == RunTrigger.SCHEDULE and not ConsolidationSettings.of(settings).enabled:
            return PairsFound([], RunCounts())  # the owner opted out after the schedule fired: judge nothing
        index = self._search.index(workspace_id, entries_revision(counter))
        found = find_pairs(index, now)
        fresh = self._unproposed(workspace_id, found)
        chosen = fresh[:MAX_JUDGED_PAIRS]
        return PairsFound(chosen, RunCounts(pairs=len(fresh), left=len(fresh) - len(chosen)))

    def _unproposed(self, workspace_id: str, pairs: Sequence[Pair]) -> list[Pair]:
        held = get_all(self._table, [keys.entry_candidate(workspace_id, p.candidate_id(workspace_id)) for p in pairs])
        return [pair for pair, item in zip(pairs, held, strict=True) if item is None]

    def propose(self, workspace_id: str, run_id: str, verdicts: Sequence[Verdict]) -> RunCounts:
        """A candidate per verdict of `duplicate` or `conflict`, iff both chains are still at the revisions
        judged, active, of one scope, owner and type, and the retired one the older: the service re-checks what
        the worker sends rather than trusting it. One that exists already is counted, never made twice."""
        proposed = already = stale = 0
        for verdict in verdicts:
            kind = KINDS.get(verdict.relation)
            if kind is None:
                continue
            items = self._table.get_many(
                [keys.entry(workspace_id, verdict.retired_id), keys.entry(workspace_id, verdict.kept_id)]
            )
            retired, kept = (head_of(item) for item in items)
            if not _still(retired, verdict.retired_revision) or not _still(kept, verdict.kept_revision):
                stale += 1
                continue
            assert isinstance(retired, EntryRecord)  # `_still` holds only for a live head
            assert isinstance(kept, EntryRecord)
            if not _pairable(retired, kept):
                raise InvalidInput("a consolidation proposal joins two chains of one scope, owner and type only")
            record = self._candidate(workspace_id, run_id, retired, kept, verdict, kind)
            try:
                self._table.transact([Create(record.to_item(workspace_id), Label.CANDIDATE)])
            except TransactionCancelled:
                held = CandidateRecord.of(self._table.get(*keys.entry_candidate(workspace_id, record.candidate_id)))
                if held is None or held.run_id != run_id:  # an earlier run's (a resumed run counts its own)
                    already += 1
                    continue
            proposed += 1
        return RunCounts(proposed=proposed, already_proposed=already, stale=stale)

    def _candidate(
        self,
        workspace_id: str,
        run_id: str,
        retired: EntryRecord,
        kept: EntryRecord,
        verdict: Verdict,
        kind: CandidateKind,
    ) -> CandidateRecord:
        now = self._clock.now()
        return CandidateRecord(
            candidate_id=candidate_id(workspace_id, retired.entry_id, retired.revision, kept.entry_id, kept.revision),
            revision=1,
            status=CandidateStatus.PENDING,
            scope=retired.scope,
            scope_owner=retired.scope_owner,
            type=retired.type,
            proposed_by=CONSOLIDATION_AUTHOR,
            created_at=iso(now),
            ttl=int(now) + CANDIDATE_TTL_SECONDS,
            kind=kind,
            entry_id=retired.entry_id,
            base_revision=retired.revision,
            keeper_id=kept.entry_id,
            keeper_revision=kept.revision,
            rule=RULES[verdict.relation],
            run_id=run_id,
        )

    def finish(self, workspace_id: str, run_id: str, counts: RunCounts) -> RunRecord:
        """The run's record, done, with its counts (finishing twice writes the same)."""
        found = consolidation_runs.run(self._table, workspace_id, run_id)
        if found is None:
            raise InvalidInput("no such consolidation run")
        done = replace(
            found, status=RunStatus.DONE, finished_at=found.finished_at or iso(self._clock.now()), counts=counts
        )
        self._table.transact([Put(done.to_item(workspace_id), Label.CONSOLIDATION)])
        return done

    def runs(self, user_id: str, workspace_id: str) -> list[RunRecord]:
        """The workspace's run records, newest first: the owner's to see."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        now = self._clock.now()
        return [r for r in consolidation_runs.runs(self._table, workspace_id) if r.ttl > now]


def _still(head: object, revision: int) -> bool:
    return isinstance(head, EntryRecord) and head.revision == revision and head.status is EntryStatus.ACTIVE


def _pairable(retired: EntryRecord, kept: EntryRecord) -> bool:
    same = retired.scope is kept.scope and retired.scope_owner == kept.scope_owner and retired.type is kept.type
    older = (retired.valid_from, retired.entry_id) < (kept.valid_from, kept.entry_id)
    return same and older  # strictly older: never a chain into itself
