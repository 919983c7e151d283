"""A linearizability checker for the document version: a compare-and-set register whose value only grows.

A history is every operation's interval (invocation and response on one monotonic clock, so the threads'
intervals compare) and its result. Three kinds of operation:

- a read that answered version `v`: at its linearization point the version was `v`;
- a Save on `base` answered 200 with version `base + 1`: at its point the version was `base`, then `base + 1`;
- a Save on `base` answered 409 with `currentVersion` `n`: at its point the version was `n` (and `n != base`,
  or the compare-and-set would have held); it changed nothing.

Why a per-version argument is exact here (sound and complete, not a heuristic): every change of the state is
a 200 in the history, and each one creates the next version, so the sequence of states is fixed: version `k`
is current from the point of the save that made it (`L[k]`) to the point of the next one (`L[k+1]`). What is
left to find is those points: `L[k]` inside its save's interval, in order, and for every observation of `v`
within `[a, b]` an instant inside `[a, b]` between `L[v]` and `L[v+1]`, which is exactly `L[v] <= b` and
`L[v+1] >= a`. Those are lower and upper bounds per point plus a chain; the earliest assignment that meets
every lower bound is the least one, so the history is linearizable iff it also meets every upper bound. An
observation needs no point of its own beyond that (observations commute).

Intervals are closed and points may coincide (ops at one instant are ordered as needed): the measured
intervals hold the real ones, so a real execution never fails for a tie of the clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Op:
    """One operation of the history: a read, or a Save on `base`."""

    client: int
    kind: Literal["read", "save"]
    start: int
    end: int
    version: int
    """A read: the version it answered. A 200: the version it made. A 409: the `currentVersion` it named."""
    ok: bool = True
    """False for a 409."""
    base: int | None = None
    content: str | None = None
    """What a read answered, or what a Save wrote."""

    def describe(self) -> str:
        if self.kind == "read":
            return f"client {self.client}'s read of version {self.version} [{self.start}, {self.end}]"
        answer = f"200 version {self.version}" if self.ok else f"409 currentVersion {self.version}"
        return f"client {self.client}'s save on base {self.base} ({answer}) [{self.start}, {self.end}]"


@dataclass
class Verdict:
    ops: int
    saved: int
    refused: int
    observations: int
    """Reads and 409s, each checked against the version it names."""
    problems: list[str] = field(default_factory=list)
    points: dict[int, int] = field(default_factory=dict)
    """A witness: the linearization point of the save that made each version."""

    @property
    def linearizable(self) -> bool:
        return not self.problems


def check(history: Sequence[Op], initial: int = 0, initial_content: str | None = None) -> Verdict:
    """Whether `history`, starting from version `initial` (with `initial_content`), is linearizable."""
    saves = [op for op in history if op.kind == "save" and op.ok]
    observations = [op for op in history if not (op.kind == "save" and op.ok)]
    verdict = Verdict(len(history), len(saves), sum(op.kind == "save" for op in observations), len(observations))
    makers = _makers(saves, initial, verdict.problems)
    last = initial + len(saves)
    contents = {initial: initial_content, **{v: op.content for v, op in makers.items()}}
    lower = {v: op.start for v, op in makers.items()}
    upper = {v: op.end for v, op in makers.items()}
    for op in observations:
        if not _legal(op, initial, last, contents, verdict.problems):
            continue
        if op.version in upper:  # the save that made it landed before this one answered
            upper[op.version] = min(upper[op.version], op.end)
        if op.version + 1 in lower:  # and the next one landed after this one was invoked
            lower[op.version + 1] = max(lower[op.version + 1], op.start)
    previous: int | None = None
    for version in range(initial + 1, last + 1):
        if version not in makers:
            break
        point = lower[version] if previous is None else max(lower[version], previous)
        if point > upper[version]:
            verdict.problems.append(_unplaceable(version, makers[version], point, upper[version], observations))
            break
        verdict.points[version] = previous = point
    return verdict


def _makers(saves: Sequence[Op], initial: int, problems: list[str]) -> dict[int, Op]:
    """The save that made each version: exactly one per version, `initial + 1` up to the last, each on the
    version before it."""
    makers: dict[int, Op] = {}
    for op in saves:
        if op.base is None or op.version != op.base + 1:
            problems.append(f"{op.describe()}: a 200 makes the version after its base")
        elif op.version in makers:
            problems.append(f"{op.describe()}: version {op.version} was made twice (also {makers[op.version]})")
        else:
            makers[op.version] = op
    expected = set(range(initial + 1, initial + len(saves) + 1))
    if set(makers) != expected and not problems:
        problems.append(f"versions made {sorted(makers)} are not {initial + 1}..{initial + len(saves)}")
    return makers


def _legal(op: Op, initial: int, last: int, contents: dict[int, str | None], problems: list[str]) -> bool:
    """The checks an observation fails on its own, whatever the order: a 409 that names its own base, a version
    that never existed, a read whose text is not what made its version."""
    if op.kind == "save" and op.version == op.base:
        problems.append(f"{op.describe()}: a 409 cannot name its own base as current")
        return False
    if not initial <= op.version <= last:
        problems.append(f"{op.describe()}: version {op.version} never existed ({initial}..{last})")
        return False
    if op.kind == "read" and op.content is not None and op.content != contents.get(op.version):
        problems.append(f"{op.describe()}: its text is not what made version {op.version}")
        return False
    return True


def _unplaceable(version: int, maker: Op, point: int, bound: int, observations: Sequence[Op]) -> str:
    """Why version `version`'s save has no point: the earliest it can be is after the latest it must be."""
    late = [op for op in observations if op.version == version - 1 and op.start == point]
    early = [op for op in observations if op.version == version and op.end == bound]
    why = []
    if late:
        why.append(f"after the start of {late[0].describe()}, which still saw version {version - 1}")
    if early:
        why.append(f"before the end of {early[0].describe()}")
    reason = " and ".join(why) or "after the save of the version before it"
    return f"not linearizable: {maker.describe()} would have to land {reason}"
