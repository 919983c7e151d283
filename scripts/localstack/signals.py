"""Signals while the local stack starts and stops: held off during cleanup, or turned into an event that a
starting stack checks at safe points."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM ignored for the block (main thread only: elsewhere signals are not ours to set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _handling(signal.SIG_IGN):
        yield


@contextmanager
def signals_set(event: threading.Event) -> Iterator[threading.Event]:
    """SIGINT and SIGTERM set `event` for the block instead of raising: an exception thrown into arbitrary
    code (say, inside subprocess's waitpid lock) can wedge the very cleanup it triggers, so a stack starting
    up checks the event at safe points instead (`LocalStack(cancel=event)`)."""

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        event.set()

    with _handling(on_signal):
        yield event


@contextmanager
def _handling(handler: Callable[[int, FrameType | None], None] | signal.Handlers) -> Iterator[None]:
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, before in previous.items():
            if before is not None:  # None: a handler not installed from Python, which Python cannot restore
                signal.signal(sig, before)
