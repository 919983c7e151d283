"""The import's changes (docs/decisions/0069): the target is empty when it begins, the workspace is closed to
everything else while it runs, each step lands once, and it ends once."""

from __future__ import annotations

from dataclasses import dataclass, field

from workspace_memory.store import keys
from workspace_memory.store.changes.base import Label


@dataclass(frozen=True)
class Absent:
    """Nothing is stored at `key` (the target's document head, entries, policy, key secret: it is empty)."""

    key: keys.Key
    label: str = Label.IMPORT_TARGET


@dataclass(frozen=True)
class BeginImport:
    """The live workspace, not importing already, is closed by `import_id` and given the archive's retention."""

    workspace_id: str
    import_id: str
    history_days: int
    agent_days: int
    label: str = Label.WORKSPACE


@dataclass(frozen=True)
class ImportHolds:
    """The workspace is live and still closed by `import_id` when an import's write lands."""

    workspace_id: str
    import_id: str
    label: str = Label.WORKSPACE


@dataclass(frozen=True)
class ApplyImport:
    """Step `step` of a running import recorded as applied, with what it wrote added to the counts, iff it was
    not applied before: a step retried after it landed writes nothing twice."""

    workspace_id: str
    import_id: str
    requested_by: str
    step: str
    counts: dict[str, int] = field(default_factory=dict)
    label: str = Label.IMPORT


@dataclass(frozen=True)
class CompleteImport:
    """The running import `completed`, once; the workspace opened again in the same transaction (`EndImport`)."""

    workspace_id: str
    import_id: str
    requested_by: str
    at: str
    label: str = Label.IMPORT


@dataclass(frozen=True)
class EndImport:
    """The workspace no longer closed by `import_id`."""

    workspace_id: str
    import_id: str
    label: str = Label.WORKSPACE
