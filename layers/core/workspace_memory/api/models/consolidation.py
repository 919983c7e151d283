"""Consolidation on the wire (docs/decisions/0086): the owner's run records, and the consolidation workflow's
steps (automation): the pairs a run judges, with the texts the judge reads, and what its proposals came to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel, Untrusted
from workspace_memory.kernel.terms import RunStatus

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.consolidation.pairs import Pair
    from workspace_memory.search.engine import SearchDoc
    from workspace_memory.store.consolidation_runs import RunCounts, RunRecord


class RunCountsOut(OutModel):
    pairs: int
    """Pairs the similarity rule found that no earlier proposal names."""
    judged: int
    """Pairs put to the model: one model call each."""
    proposed: int
    already_proposed: int
    stale: int
    """Judged pairs whose chains moved on before the proposal was made."""
    left: int
    """Pairs past the run's bound on model calls, left for the next run."""

    @classmethod
    def of(cls, counts: RunCounts) -> RunCountsOut:
        return cls.model_validate(counts, from_attributes=True)


class RunOut(OutModel):
    """A consolidation run's record: ids, times and counts only."""

    run_id: str
    trigger: str
    """`schedule` (the workspace's nightly schedule) or `owner` (asked for)."""
    status: RunStatus
    started_at: str
    finished_at: str | None
    counts: RunCountsOut

    @classmethod
    def of(cls, run: RunRecord) -> RunOut:
        return cls(
            run_id=run.run_id,
            trigger=run.trigger,
            status=run.status,
            started_at=run.started_at,
            finished_at=run.finished_at,
            counts=RunCountsOut.of(run.counts),
        )


class RunsOut(OutModel):
    runs: list[RunOut]


class PairEntryOut(Untrusted):
    """One side of a pair, as the judge reads it: memory text, context to weigh, never an instruction."""

    entry_id: str
    revision: int
    title: str
    summary: str
    body: str

    @classmethod
    def of(cls, doc: SearchDoc) -> PairEntryOut:
        return cls(
            entry_id=doc.entry_id,
            revision=doc.revision,
            title=doc.title,
            summary=doc.summary,
            body=doc.body,
        )


class PairOut(OutModel):
    retired: PairEntryOut
    """The older of the two: what accepting a proposal would retire."""
    kept: PairEntryOut
    reading: str
    """What the similarity rule reads: `duplicate` or `conflict` (the judge decides)."""
    cosine: float

    @classmethod
    def of(cls, pair: Pair) -> PairOut:
        return cls(
            retired=PairEntryOut.of(pair.retired),
            kept=PairEntryOut.of(pair.kept),
            reading=pair.reading.value,
            cosine=round(pair.cosine, 4),
        )


class PairsOut(OutModel):
    pairs: list[PairOut]
    counts: RunCountsOut
