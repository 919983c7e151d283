"""The export's changes (docs/decisions/0068): its files land only while it runs, it is finished once, and it is
downloaded once."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store.changes.base import Label


@dataclass(frozen=True)
class ExportRunning:
    """The export exists, is still `running` and has not expired when its files land (a retried step after the
    export finished, was downloaded or expired writes nothing)."""

    workspace_id: str
    export_id: str
    now: int
    label: str = Label.EXPORT


@dataclass(frozen=True)
class FinishExport:
    """The export's status from `running` to `status` (`ready`, or `too_large`), once."""

    workspace_id: str
    export_id: str
    status: str
    label: str = Label.EXPORT


@dataclass(frozen=True)
class DownloadExport:
    """The export's status from `ready` to `downloaded` iff `by` requested it and it has not expired: a second
    download (or a concurrent one) finds it `downloaded` and is refused."""

    workspace_id: str
    export_id: str
    by: str
    at: str
    now: int
    label: str = Label.EXPORT
