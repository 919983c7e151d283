"""Pinning the local stack's clock: the stack's functions read the time from a file while it holds an epoch
(`workspace_memory.kernel.clock.FileClock`, honoured only on the local stack: settings refuse it elsewhere). The
functions run in processes of their own, so a test cannot reach into their services to fix the hour an
agent-write limit counts in; it pins the file instead."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PinnedClock:
    """The time the stack reads while pinned; `advance` moves it for every function at once."""

    def __init__(self, path: Path, at: float) -> None:
        self._path = path
        self._at = at
        self._write()

    def now(self) -> float:
        return self._at

    def advance(self, seconds: float) -> None:
        self._at += seconds
        self._write()

    def _write(self) -> None:
        staged = self._path.with_name(self._path.name + ".next")
        staged.write_text(repr(self._at), encoding="ascii")
        os.replace(staged, self._path)  # a reader sees the old epoch or the new one, never half of one


@contextmanager
def pinned(path: Path, at: float) -> Iterator[PinnedClock]:
    """The stack's clock stands at `at` for the block; the system's time again after it."""
    clock = PinnedClock(path, at)
    try:
        yield clock
    finally:
        path.unlink(missing_ok=True)
