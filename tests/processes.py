"""Waiting on processes the tests do not own the exit of (orphans, a killed stack's children): polled, since
neither the kernel's signal nor an exec sends this process an event."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def gone(pid: int) -> bool:
    """No such process, or only its exit status is left (a zombie nobody reaped: orphans go to PID 1)."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Whether `condition` holds before `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
