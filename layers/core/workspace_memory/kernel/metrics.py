"""The metrics port: what the domain counts, in its own words (docs/operations.md#metrics).

Why a port: the domain decides where a count happens (a fence refusal, a conflict, a recall's status, a
redaction, a search), but domain modules import no powertools: the composition root installs a sink
(`bootstrap.instrumented`: CloudWatch EMF through powertools), and until one is installed nothing is emitted
(unit tests, scripts). Why one installed sink rather than a constructor argument: the emission points sit deep
in services built in one place, and a count is a side channel, not a dependency the domain reasons about.

What never becomes a dimension: memory, note or entry text, and ids (a workspace id is not one). A dimension's
value is a member of a closed vocabulary (`StrEnum`) or an error class's stable code (`Code`), checked again
by `dimension_value` so a free string cannot slip in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from typing import NewType, Protocol

Code = NewType("Code", str)
"""A domain error class's `code` (`STALE_BASE_VERSION`): a constant of the code, never derived from input."""

Value = StrEnum | Code

_ENUM = re.compile(r"[a-z][a-z_:]{0,39}")
"""An enumeration member's value (`key_session`, `memory:write`): no digit, so no id either."""
_CODE = re.compile(r"[A-Z][A-Z0-9_]{1,63}")
"""An error code (`STALE_BASE_VERSION`)."""


class Metric(StrEnum):
    """The metric names (CloudWatch), each with its dimensions (docs/operations.md#metrics)."""

    FENCE_REFUSAL = "FenceRefusal"
    """A fence refused an agent's write: `operation`, `predicate`."""
    CONFLICT = "Conflict"
    """A request answered 409: `code`."""
    RECALL = "Recall"
    """A recall answered: `status`."""
    REDACTION = "Redaction"
    """Findings replaced by markers before storage: `kind` (the value is the number of findings)."""
    SEARCH_LATENCY = "SearchLatency"
    """Milliseconds one search took, from the loaded caller to the ranked results: `origin`."""


class Unit(StrEnum):
    COUNT = "Count"
    MILLISECONDS = "Milliseconds"


class Operation(StrEnum):
    """What a fence guarded when it refused."""

    CAPTURE = "capture"
    """The agent's edit of the document (`capture`)."""
    ENTRY_WRITE = "entry_write"
    """The agent's entry tools: a save, or a proposal to forget (`agent_entries`)."""


class SearchOrigin(StrEnum):
    """Who searched: a search route, or recall's selection of entries for the turn."""

    ROUTE = "route"
    RECALL = "recall"


class Sink(Protocol):
    def emit(self, metric: Metric, unit: Unit, value: float, dimensions: Mapping[str, str]) -> None: ...


_installed: list[Sink] = []


def install(sink: Sink | None) -> None:
    """The process's sink (None: none, as before the composition root ran)."""
    _installed[:] = [] if sink is None else [sink]


def dimension_value(value: Value) -> str:
    """`value` as a dimension, or ValueError: an enumeration member or a code, never free text."""
    shape = _ENUM if isinstance(value, StrEnum) else _CODE
    if not shape.fullmatch(value):
        raise ValueError("a metric dimension must be an enumeration value or an error code")
    return str(value)


def emit(metric: Metric, unit: Unit, value: float, dimensions: Mapping[str, Value]) -> None:
    if not _installed:
        return
    checked = {name: dimension_value(given) for name, given in dimensions.items()}
    _installed[0].emit(metric, unit, value, checked)


def count(metric: Metric, value: int = 1, **dimensions: Value) -> None:
    emit(metric, Unit.COUNT, value, dimensions)


@contextmanager
def elapsed(metric: Metric, **dimensions: Value) -> Iterator[None]:
    """Emits the block's duration in milliseconds (a monotonic duration, not the domain clock, which the local
    stack may pin) when it ends without an error."""
    started = time.perf_counter()
    yield
    emit(metric, Unit.MILLISECONDS, (time.perf_counter() - started) * 1000, dimensions)
