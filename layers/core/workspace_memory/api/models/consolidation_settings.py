"""The owner's consolidation settings and an on-demand run (docs/decisions/0088): flags, times and ids only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel
from workspace_memory.consolidation.contract import RunTrigger

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.consolidation.control import ConsolidationView, RunAnswer


class ConsolidationOut(OutModel):
    """What the owner decided (`enabled`, `autoFile`, the `revision` to compare-and-set on) and what the
    workspace gets: `scheduled` is whether its nightly schedule exists now (read from the workflow service, not
    from the setting), `cron` when it fires (UTC), `nextRunAt` its next time (null: no schedule)."""

    enabled: bool
    auto_file: bool
    revision: int
    cron: str
    scheduled: bool
    next_run_at: str | None

    @classmethod
    def of(cls, view: ConsolidationView) -> ConsolidationOut:
        settings = view.settings
        return cls(
            enabled=settings.enabled,
            auto_file=settings.auto_file,
            revision=settings.revision,
            cron=view.cron,
            scheduled=view.scheduled,
            next_run_at=view.next_run_at,
        )


class ConsolidationRunOut(OutModel):
    """The run now going for the workspace: the one just started (202), or the one that was going already
    (200), the owner's or the schedule's (`trigger`)."""

    run_id: str
    trigger: RunTrigger

    @classmethod
    def of(cls, answer: RunAnswer) -> ConsolidationRunOut:
        return cls(run_id=answer.run_id, trigger=answer.trigger)
