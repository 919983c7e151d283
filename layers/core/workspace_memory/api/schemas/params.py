"""Query and header values every context parses the same way: times and base revisions or versions."""

from __future__ import annotations

import calendar
import re
import time

from workspace_memory.kernel.errors import BaseRevisionRequired, InvalidInput, PreconditionRequired

AS_OF = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")


def parse_time(raw: str | None, name: str) -> float | None:
    """A query's time (`asOf`, `since`, `until`): an RFC 3339 UTC time (`2026-01-01T00:00:00Z`, optional
    fraction), in epoch seconds."""
    if raw is None:
        return None
    refusal = f"{name} must be an RFC 3339 UTC time such as 2026-01-01T00:00:00Z"
    if not AS_OF.fullmatch(raw):
        raise InvalidInput(refusal)
    try:
        whole = calendar.timegm(time.strptime(raw[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        raise InvalidInput(refusal) from None
    fraction = raw[19:-1]
    return whole + (float(fraction) if fraction else 0.0)


def parse_as_of(raw: str | None) -> float | None:
    """`asOf`: an RFC 3339 UTC time."""
    return parse_time(raw, "asOf")


def parse_base_revision(raw: str | None) -> int:
    """`X-Base-Revision`: a positive decimal integer; absent is a distinct error (428)."""
    if raw is None or raw.strip() == "":
        raise BaseRevisionRequired("X-Base-Revision header is required")
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 12 or int(text) < 1:
        raise InvalidInput("X-Base-Revision must be a positive integer")
    return int(text)


def parse_base_version(raw: str | None) -> int:
    """`X-Base-Version`: a non-negative decimal integer; absent is a distinct error (428)."""
    if raw is None or raw.strip() == "":
        raise PreconditionRequired("X-Base-Version header is required")
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 12:
        raise InvalidInput("X-Base-Version must be a non-negative integer")
    return int(text)
