"""`make bench`: latency and AWS calls per operation, against a raw-DynamoDB baseline measured in the same run.

Not a test: it starts its own moto server process (the local stack's, serialized), provisions the table and
key, builds the services exactly as a Lambda cold start does, and prints a table. Every operation runs
N times after a warm-up; the operations are interleaved round-robin, so any drift of the server (its table
grows with every save) falls on the baseline and the operations alike. Absolute moto latencies say little
about AWS; the portable results are the AWS calls per operation and the ratios to the baseline.

    .venv/bin/python -m scripts.bench [--iterations 200] [--warmup 5] [--json PATH]

AWS calls are counted by a botocore `before-call.*.*` handler on every client in play (the KMS calls of the
aws-encryption-sdk go through the client the cipher was given, so they are counted too). That event fires
once per API operation, before any retry, and ahead of handlers on the bare `before-call` prefix, which a
response-producing handler (botocore's Stubber, for one) would starve.

To benchmark another operation, add one `Operation(name, baseline_name, fn)` line to `operations()`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3

from scripts.localstack.__main__ import start_moto
from scripts.localstack.resources import FAKE_CREDENTIALS, provision
from workspace_memory import keys
from workspace_memory.access import ShareType
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document import DocumentService
from workspace_memory.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DOCUMENT_BYTES = 2048
HISTORY_PAGE = 20
BASELINE_PK = "BENCH#baseline"
RAW_GET = "raw GetItem"
RAW_PUT = "raw PutItem"

# -- pure helpers (tested in tests/unit/test_bench_stats.py) ---------------------------------------------


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


def format_count(value: float) -> str:
    """1.0 -> `1`, 0.5 -> `0.5`, 0.333 -> `0.33`."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def format_calls(counts: Mapping[str, float]) -> str:
    return " ".join(f"{name}={format_count(value)}" for name, value in counts.items()) or "(none)"


def format_ratio(value: float | None, baseline_name: str | None) -> str:
    if baseline_name is None:
        return "(baseline)"
    if value is None:
        return f"n/a (no {baseline_name})"
    return f"{value:.2f}x {baseline_name}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A plain-text table; `align` holds one `<` or `>` per column (default `<`)."""
    columns = len(headers)
    if any(len(row) != columns for row in rows):
        raise ValueError("every row needs one cell per header")
    aligns = align.ljust(columns, "<")
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = (f"{cell:{a}{w}}" for cell, a, w in zip(cells, aligns, widths, strict=True))
        return " | ".join(padded).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def sample_document(size: int = DOCUMENT_BYTES) -> str:
    """Deterministic Markdown of exactly `size` ASCII bytes, like a team's memory document."""
    lines = ["# Team memory", ""]
    number = 0
    while sum(len(text) + 1 for text in lines) < size:
        lines.append(f"- Decision {number:03d}: deploys go out on Tuesdays; the on-call owner rotates weekly.")
        number += 1
    return "\n".join(lines)[:size]


@dataclass(frozen=True)
class Measured:
    """Raw observations of one operation: a latency and the AWS calls made, per timed iteration."""

    name: str
    baseline_name: str | None
    samples_ms: list[float]
    calls: list[list[str]]
    expected: tuple[str, ...] = ()


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


def render(summaries: Sequence[Summary]) -> str:
    rows = [
        [
            s.name,
            format_calls(s.calls_per_op),
            f"{s.median_ms:.2f}",
            f"{s.p90_ms:.2f}",
            format_ratio(s.median_ratio, s.baseline_name),
        ]
        for s in summaries
    ]
    return format_table(["operation", "AWS calls/op", "median ms", "p90 ms", "median vs baseline"], rows, "<<>><")


@dataclass(frozen=True)
class KmsScenario:
    scenario: str
    reads: int
    kms_calls_per_read: dict[str, float]


def render_kms(scenarios: Sequence[KmsScenario]) -> str:
    rows = [[s.scenario, str(s.reads), format_calls(s.kms_calls_per_read)] for s in scenarios]
    return format_table(["KMS calls per document read", "reads", "KMS calls/read"], rows, "<><")


def report_json(summaries: Sequence[Summary], kms: Sequence[KmsScenario], meta: Mapping[str, Any]) -> dict[str, Any]:
    return {**meta, "operations": [asdict(s) for s in summaries], "kms_per_read": [asdict(k) for k in kms]}


# -- measurement --------------------------------------------------------------------------------------------


class CallRecorder:
    """A botocore handler appending `service.Operation` for every API call made through the attached clients."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, event_name: str, **_: Any) -> None:
        # Returns None on purpose: a before-call handler's return value would replace the AWS response.
        self.calls.append(call_name(event_name))

    def attach(self, *clients: Any) -> None:
        for client in clients:
            client.meta.events.register("before-call.*.*", self, unique_id=f"bench-calls-{id(self)}")

    def since(self, mark: int) -> list[str]:
        return self.calls[mark:]


@dataclass(frozen=True)
class Operation:
    """One benchmarked call. `baseline_name` names the operation its median is divided by (None: a baseline).
    `expected` lists calls to show even when they did not happen (say a KMS call the cache avoided)."""

    name: str
    baseline_name: str | None
    fn: Callable[[], object]
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
            mark = len(recorder.calls)
            start = time.perf_counter_ns()
            op.fn()
            elapsed_ms = (time.perf_counter_ns() - start) / 1e6
            if round_number >= warmup:
                samples[op.name].append(elapsed_ms)
                calls[op.name].append(recorder.since(mark))
    return [Measured(op.name, op.baseline_name, samples[op.name], calls[op.name], op.expected) for op in operations]


@dataclass
class Bench:
    """The state the operations share: the services, a raw client, one seeded workspace."""

    services: Services
    raw: DynamoDBClient
    owner: str
    workspace_id: str
    content: str
    head_version: int
    blob: bytes

    def raw_get(self) -> None:
        self.raw.get_item(
            TableName=self.services.settings.table_name,
            Key={"pk": {"S": BASELINE_PK}, "sk": {"S": "BLOB"}},
            ConsistentRead=True,
        )

    def raw_put(self) -> None:
        self.raw.put_item(
            TableName=self.services.settings.table_name,
            Item={"pk": {"S": BASELINE_PK}, "sk": {"S": "BLOB"}, "ciphertext": {"B": self.blob}},
        )

    def raw_query(self) -> None:
        """The query `history` makes, bare: for telling moto's Query cost from the service's."""
        self.raw.query(
            TableName=self.services.settings.table_name,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": {"S": keys.ws(self.workspace_id)}, ":prefix": {"S": keys.VERSION_PREFIX}},
            ScanIndexForward=False,
            Limit=HISTORY_PAGE + 1,
            ConsistentRead=True,
        )

    def save(self) -> None:
        commit = self.services.document.save(self.owner, self.workspace_id, self.content, self.head_version)
        self.head_version = commit.version.version


def operations(bench: Bench) -> list[Operation]:
    docs = bench.services.document
    owner, ws = bench.owner, bench.workspace_id
    s = bench.services
    uncached = DocumentService(s.table, KmsCipher(s.clients.kms, s.settings.kms_key_id, cache_entries=0), s.clock)
    return [
        Operation(RAW_GET, None, bench.raw_get),
        Operation(RAW_PUT, None, bench.raw_put),
        Operation(f"raw Query ({HISTORY_PAGE + 1} versions)", None, bench.raw_query),
        Operation("read", RAW_GET, partial(docs.read, owner, ws), ("kms.Decrypt",)),
        Operation("read, no plaintext cache", RAW_GET, partial(uncached.read, owner, ws)),
        Operation("save", RAW_PUT, bench.save),
        Operation("history", RAW_GET, partial(docs.history, owner, ws, HISTORY_PAGE, None)),
    ]


def kms_per_read(settings: Settings, bench: Bench, reads: int) -> list[KmsScenario]:
    """KMS calls per read as a separate Lambda (its own clients and cipher cache) sees them."""
    reader = build_services(settings)
    recorder = CallRecorder()
    recorder.attach(reader.clients.dynamodb, reader.clients.kms, bench.services.clients.kms)
    owner, ws = bench.owner, bench.workspace_id

    def kms_calls(fn: Callable[[], object], times: int) -> dict[str, float]:
        per_read = []
        for _ in range(times):
            mark = len(recorder.calls)
            fn()
            per_read.append([c for c in recorder.since(mark) if c.startswith("kms.")])
        return calls_per_op(per_read, ("kms.Decrypt",))

    read = partial(reader.document.read, owner, ws)
    cold = kms_calls(read, 1)
    warm = kms_calls(read, reads)
    bench.save()  # another process (the benchmark's writer) moves the head
    changed = kms_calls(read, 1)
    writer_own = kms_calls(partial(bench.services.document.read, owner, ws), 1)
    return [
        KmsScenario("cold process, first read", 1, cold),
        KmsScenario("warm process, unchanged head", reads, warm),
        KmsScenario("warm process, head changed by another process", 1, changed),
        KmsScenario("writer process, reading its own save", 1, writer_own),
    ]


def isolate_environment() -> None:
    """Fake credentials and no profile or config file: nothing here can sign a request for real AWS."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


def run(endpoint: str, iterations: int, warmup: int) -> tuple[str, dict[str, Any]]:
    resources = provision(endpoint)
    settings = Settings(
        table_name=resources.table_name, kms_key_id=resources.kms_key_arn, endpoint_url=resources.endpoint_url
    )
    services = build_services(settings)
    owner = "bench-owner"
    workspace_id = services.access.create_workspace(owner, "bench", ShareType.SHARED)
    content = sample_document()
    bench = Bench(services, _raw_client(settings), owner, workspace_id, content, 0, b"")
    for _ in range(HISTORY_PAGE + 1):  # a full history page from the first round on
        bench.save()
    head = services.table.get(*keys.head(workspace_id))
    assert head is not None
    bench.blob = os.urandom(len(head["ciphertext"]))  # ciphertext is incompressible; so is this
    bench.raw_put()

    recorder = CallRecorder()
    recorder.attach(services.clients.dynamodb, services.clients.kms, bench.raw)
    summaries = summarize(measure(operations(bench), recorder, iterations, warmup))
    kms = kms_per_read(settings, bench, iterations)

    meta = {
        "iterations": iterations,
        "warmup": warmup,
        "document_bytes": len(content.encode("utf-8")),
        "ciphertext_bytes": len(bench.blob),
        "history_page": HISTORY_PAGE,
    }
    text = "\n".join(
        [
            f"workspace-memory bench: {iterations} timed iterations per operation after {warmup} warm-up, "
            "interleaved round-robin",
            f"moto server {endpoint} (serialized); document {meta['document_bytes']} B, "
            f"ciphertext {meta['ciphertext_bytes']} B (baseline items carry a binary attribute of that size)",
            "",
            render(summaries),
            "",
            render_kms(kms),
            "",
            "moto latencies are not AWS latencies: compare the calls per operation and the ratios.",
        ]
    )
    return text, report_json(summaries, kms, meta)


def _raw_client(settings: Settings) -> DynamoDBClient:
    session = boto3.session.Session(region_name=settings.region)
    return session.client("dynamodb", endpoint_url=settings.endpoint_url)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=_positive, default=200, help="timed runs per operation (200)")
    parser.add_argument("--warmup", type=_non_negative, default=5, help="untimed runs per operation first (5)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    isolate_environment()
    moto, endpoint = start_moto(0)
    try:
        text, data = run(endpoint, args.iterations, args.warmup)
    finally:
        moto.terminate()
        try:
            moto.wait(timeout=10)
        except subprocess.TimeoutExpired:
            moto.kill()
            moto.wait()
    print(text, flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", flush=True)


if __name__ == "__main__":
    main()
