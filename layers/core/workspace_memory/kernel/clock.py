"""Time as a port, so expiry and ordering are testable without waiting."""

from __future__ import annotations

import calendar
import time
from typing import Protocol

DAY_SECONDS = 86_400
"""One day in seconds, the unit every retention and time-to-live setting counts in."""


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class FileClock:
    """The local stack's clock: the epoch written in `path` while it holds one (a test pins the hour every
    function counts in), the system's time otherwise. Only settings that passed the local-stack check
    (`Settings.local_clock_file`) name a file, so a deployed function never reads one."""

    def __init__(self, path: str) -> None:
        self._path = path

    def now(self) -> float:
        try:
            with open(self._path, encoding="ascii") as pinned:
                text = pinned.read().strip()
        except FileNotFoundError:
            return time.time()
        return float(text) if text else time.time()


class ManualClock:
    """A clock tests move by hand."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


def iso(ts: float) -> str:
    """RFC 3339 UTC with milliseconds, the one timestamp format on the wire."""
    whole = int(ts)
    millis = round((ts - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def epoch_seconds(stamp: str) -> int:
    """The whole epoch second of an `iso` timestamp (its milliseconds dropped)."""
    return calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))


def epoch_time(stamp: str) -> float:
    """An `iso` timestamp as epoch seconds with its milliseconds: what a validity window is compared in (a
    revision superseded within the same second must not answer `asOf` for the earlier part of it)."""
    fraction = stamp[19:].rstrip("Z")
    return epoch_seconds(stamp) + (float(fraction) if fraction.startswith(".") and len(fraction) > 1 else 0.0)
