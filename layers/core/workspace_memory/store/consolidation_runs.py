"""A consolidation run's record (`CONSRUN#{runId}`, docs/decisions/0086): what started it, when it started and
ended, and how many pairs it examined, judged and proposed. Ids, times and counts only; its `ttl` lets old runs
expire on their own."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import RunStatus
from workspace_memory.store import keys
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Item, Table
from workspace_memory.store.record_fields import optional_int, present


@dataclass(frozen=True)
class RunCounts:
    pairs: int = 0
    """Pairs the similarity rule found that no earlier proposal named."""
    judged: int = 0
    """Pairs put to the model (one model call each)."""
    proposed: int = 0
    already_proposed: int = 0
    """Judged pairs whose proposal existed already (a run repeated or resumed)."""
    stale: int = 0
    """Judged pairs whose chains moved on before the proposal was made."""
    left: int = 0
    """Pairs past the run's bound on model calls, left for the next run."""


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    trigger: str
    status: RunStatus
    started_at: str
    ttl: int
    finished_at: str | None = None
    counts: RunCounts = RunCounts()

    @classmethod
    def of(cls, item: Item | None) -> RunRecord | None:
        if item is None:
            return None
        counts = RunCounts(**{field: optional_int(item.get(name)) or 0 for field, name in _COUNT_ATTRIBUTES.items()})
        return cls(
            run_id=item["runId"],
            trigger=item["trigger"],
            status=RunStatus(item["status"]),
            started_at=item["startedAt"],
            ttl=int(item["ttl"]),
            finished_at=item.get("finishedAt"),
            counts=counts,
        )

    def to_item(self, workspace_id: str) -> Item:
        counts = {name: getattr(self.counts, field) for field, name in _COUNT_ATTRIBUTES.items()}
        return {
            **keys.as_key(keys.consolidation_run(workspace_id, self.run_id)),
            **present(
                {
                    "runId": self.run_id,
                    "trigger": self.trigger,
                    "status": self.status.value,
                    "startedAt": self.started_at,
                    "finishedAt": self.finished_at,
                    "ttl": self.ttl,
                    **counts,
                }
            ),
        }


_COUNT_ATTRIBUTES = {
    "pairs": "pairs",
    "judged": "judged",
    "proposed": "proposed",
    "already_proposed": "alreadyProposed",
    "stale": "stale",
    "left": "left",
}


def run(table: Table, workspace_id: str, run_id: str) -> RunRecord | None:
    return RunRecord.of(table.get(*keys.consolidation_run(workspace_id, run_id)))


def runs(table: Table, workspace_id: str) -> list[RunRecord]:
    """Every run record the workspace still holds, newest first."""
    items = query_all(table, keys.ws(workspace_id), keys.CONSOLIDATION_RUN_PREFIX, page_size=100)
    found = [r for r in (RunRecord.of(item) for item in items) if r is not None]
    return sorted(found, key=lambda r: (r.started_at, r.run_id), reverse=True)
