"""The benchmark's measuring and statistics: percentiles, ratios, AWS calls counted per operation or model
round, and the round-robin loop that times the operations. Pure but for the clock (tested in
tests/unit/test_bench_stats.py)."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linearly interpolated between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def p90(values: Sequence[float]) -> float:
    return percentile(values, 90)


def ratio(value: float, baseline: float | None) -> float | None:
    """value / baseline, or None when there is no (positive) baseline to compare with."""
    if baseline is None or baseline <= 0:
        return None
    return value / baseline


def call_name(event_name: str) -> str:
    """`before-call.dynamodb.TransactGetItems` -> `dynamodb.TransactGetItems`."""
    parts = event_name.split(".")
    if len(parts) != 3 or parts[0] != "before-call":
        raise ValueError(f"not a before-call event: {event_name!r}")
    return f"{parts[1]}.{parts[2]}"


def calls_per_op(iterations: Sequence[Sequence[str]], expected: Iterable[str] = ()) -> dict[str, float]:
    """Mean calls per operation, by `service.Operation`, sorted; `expected` names appear even at zero."""
    totals: Counter[str] = Counter(call for calls in iterations for call in calls)
    for name in expected:
        totals.setdefault(name, 0)
    count = len(iterations)
    return {name: (totals[name] / count if count else 0.0) for name in sorted(totals)}


def calls_per_round(
    turns: Sequence[Sequence[str]], rounds: Sequence[int], expected: Iterable[str] = ()
) -> dict[str, float]:
    """Calls per model round, by `service.Operation`, sorted: all turns' calls over all their rounds."""
    if len(turns) != len(rounds):
        raise ValueError("one round count per turn")
    totals: Counter[str] = Counter(call for calls in turns for call in calls)
    for name in expected:
        totals.setdefault(name, 0)
    count = sum(rounds)
    return {name: (totals[name] / count if count else 0.0) for name in sorted(totals)}


class CallRecorder:
    """A botocore handler appending `service.Operation` for every API call made through the attached clients.

    It listens on `before-call.*.*`: that event fires once per API operation, before any retry, and ahead of
    handlers on the bare `before-call` prefix, which a response-producing handler (botocore's Stubber, for
    one) would starve."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, event_name: str, **_: Any) -> None:
        # Returns None on purpose: a before-call handler's return value would replace the AWS response.
        self.calls.append(call_name(event_name))  # list.append is atomic: gateway and worker threads share it

    def attach(self, *clients: Any) -> None:
        for client in clients:
            client.meta.events.register("before-call.*.*", self, unique_id=f"bench-calls-{id(self)}")

    def since(self, mark: int) -> list[str]:
        return self.calls[mark:]


@dataclass(frozen=True)
class Operation:
    """One benchmarked call. `baseline_name` names the operation its median is divided by (None: a baseline).
    `expected` lists calls to show even when they did not happen (say a KMS call the cache avoided).
    `before`, if given, runs ahead of every run of `fn`, untimed and with its AWS calls not counted."""

    name: str
    baseline_name: str | None
    fn: Callable[[], object]
    expected: tuple[str, ...] = ()
    before: Callable[[], object] | None = None


@dataclass(frozen=True)
class Measured:
    """Raw observations of one operation: a latency and the AWS calls made, per timed iteration."""

    name: str
    baseline_name: str | None
    samples_ms: list[float]
    calls: list[list[str]]
    expected: tuple[str, ...] = ()


def measure(operations: Sequence[Operation], recorder: CallRecorder, iterations: int, warmup: int) -> list[Measured]:
    """Runs the operations round-robin; the first `warmup` rounds are neither timed nor counted."""
    names = [op.name for op in operations]
    if len(set(names)) != len(names):
        raise ValueError(f"operation names must be unique: {names}")
    samples: dict[str, list[float]] = {op.name: [] for op in operations}
    calls: dict[str, list[list[str]]] = {op.name: [] for op in operations}
    for round_number in range(warmup + iterations):
        for op in operations:
            if op.before is not None:
                op.before()
            mark = len(recorder.calls)
            start = time.perf_counter_ns()
            op.fn()
            elapsed_ms = (time.perf_counter_ns() - start) / 1e6
            if round_number >= warmup:
                samples[op.name].append(elapsed_ms)
                calls[op.name].append(recorder.since(mark))
    return [Measured(op.name, op.baseline_name, samples[op.name], calls[op.name], op.expected) for op in operations]


@dataclass(frozen=True)
class Summary:
    name: str
    baseline_name: str | None
    iterations: int
    calls_per_op: dict[str, float]
    median_ms: float
    p90_ms: float
    median_ratio: float | None


def summarize(measured: Sequence[Measured]) -> list[Summary]:
    medians = {m.name: median(m.samples_ms) for m in measured}
    return [
        Summary(
            name=m.name,
            baseline_name=m.baseline_name,
            iterations=len(m.samples_ms),
            calls_per_op=calls_per_op(m.calls, m.expected),
            median_ms=medians[m.name],
            p90_ms=p90(m.samples_ms),
            median_ratio=None if m.baseline_name is None else ratio(medians[m.name], medians.get(m.baseline_name)),
        )
        for m in measured
    ]


@dataclass(frozen=True)
class KmsScenario:
    scenario: str
    reads: int
    kms_calls_per_read: dict[str, float]


KEYRING, KMS_PER_OBJECT = "keyring", "kms per object"
"""The two encryption schemes scripts.bench.keyring compares."""


@dataclass(frozen=True)
class SchemeCost:
    name: str
    cold_kms_calls: int
    """KMS calls of the first encrypt+decrypt pair in a new process."""
    cold_key_store_reads: int
    cold_ms: float
    kms_calls_per_encrypt: float
    """Warm: KMS calls per encrypt after the first pair."""
    kms_calls_per_decrypt: float
    key_store_reads_per_pair: float
    encrypt_ms: float
    """Warm: median milliseconds per encrypt."""
    decrypt_ms: float


@dataclass(frozen=True)
class KeyringCost:
    pairs: int
    size: int
    keyring: SchemeCost
    kms: SchemeCost

    def ratios(self) -> dict[str, float | None]:
        """keyring / kms per object, warm: below 1 the keyring is cheaper (None: no baseline to divide by)."""
        ring, kms = self.keyring, self.kms
        return {
            "encrypt": ratio(ring.encrypt_ms, kms.encrypt_ms),
            "decrypt": ratio(ring.decrypt_ms, kms.decrypt_ms),
            "kms calls": ratio(
                ring.kms_calls_per_encrypt + ring.kms_calls_per_decrypt,
                kms.kms_calls_per_encrypt + kms.kms_calls_per_decrypt,
            ),
        }


@dataclass(frozen=True)
class TurnSample:
    """One timed turn: wall time, model rounds, activities run, and the AWS calls made meanwhile, split into
    the API's (through the gateway: table and KMS) and the Temporal payload codec's (KMS)."""

    ms: float
    rounds: int
    activities: int
    api_calls: list[str]
    codec_calls: list[str]


@dataclass(frozen=True)
class TurnSummary:
    name: str
    baseline_name: str | None
    turns: int
    rounds_per_turn: float
    activities_per_round: float
    api_calls_per_round: dict[str, float]
    codec_calls_per_round: dict[str, float]
    median_ms_per_round: float
    p90_ms_per_round: float
    median_ms_per_turn: float
    median_ratio: float | None


def summarize_turns(runs: Sequence[tuple[str, Sequence[TurnSample]]], baseline_name: str) -> list[TurnSummary]:
    """Per-round figures of each way of running the turns; the ratio divides medians of ms per round."""
    per_round = {name: [s.ms / s.rounds for s in samples] for name, samples in runs}
    medians = {name: median(values) for name, values in per_round.items()}
    out = []
    for name, samples in runs:
        rounds = [s.rounds for s in samples]
        baseline = None if name == baseline_name else baseline_name
        out.append(
            TurnSummary(
                name=name,
                baseline_name=baseline,
                turns=len(samples),
                rounds_per_turn=sum(rounds) / len(samples),
                activities_per_round=sum(s.activities for s in samples) / sum(rounds),
                api_calls_per_round=calls_per_round([s.api_calls for s in samples], rounds),
                codec_calls_per_round=calls_per_round([s.codec_calls for s in samples], rounds),
                median_ms_per_round=medians[name],
                p90_ms_per_round=p90(per_round[name]),
                median_ms_per_turn=median([s.ms for s in samples]),
                median_ratio=None if baseline is None else ratio(medians[name], medians.get(baseline)),
            )
        )
    return out


class ImportTime(NamedTuple):
    """One cold import: wall-clock and CPU time of the importing process, in milliseconds."""

    wall_ms: float
    cpu_ms: float


@dataclass(frozen=True)
class ColdImport:
    """A module's cold import in fresh interpreters: medians of the runs, and their ratios to the baseline's
    (None for the baseline itself). Wall time is what a cold start waits for; CPU time is what the import
    costs its own process, which the load of a shared machine distorts less."""

    module: str
    runs: int
    median_ms: float
    p90_ms: float
    ratio: float | None
    cpu_median_ms: float
    cpu_ratio: float | None


def summarize_cold_imports(samples: Sequence[tuple[str, Sequence[ImportTime]]], baseline: str) -> list[ColdImport]:
    """Per module (in the order given), the medians of its import times and their ratios to `baseline`'s."""
    walls = {module: median([t.wall_ms for t in times]) for module, times in samples}
    cpus = {module: median([t.cpu_ms for t in times]) for module, times in samples}
    if baseline not in walls:
        raise ValueError(f"no samples of the baseline {baseline!r}")
    rows = []
    for module, times in samples:
        own = module == baseline
        rows.append(
            ColdImport(
                module=module,
                runs=len(times),
                median_ms=walls[module],
                p90_ms=p90([t.wall_ms for t in times]),
                ratio=None if own else ratio(walls[module], walls[baseline]),
                cpu_median_ms=cpus[module],
                cpu_ratio=None if own else ratio(cpus[module], cpus[baseline]),
            )
        )
    return rows
