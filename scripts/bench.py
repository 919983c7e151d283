"""`make bench`: latency and AWS calls per operation, against raw-DynamoDB baselines measured in the same run.

Not a test: it starts its own moto server process (the local stack's, serialized), provisions the table and
key, builds the services exactly as a Lambda cold start does, and prints tables. Every operation runs N times
after a warm-up; the operations are interleaved round-robin, so any drift of the server falls on the
baselines and the operations alike. Absolute moto latencies say little about AWS; the portable results are
the AWS calls per operation and the ratios to the baselines.

    .venv/bin/python -m scripts.bench [--iterations 200] [--warmup 5] [--turns 10] [--turn-warmup 1] [--json PATH]

AWS calls are counted by a botocore `before-call.*.*` handler on every client in play (the KMS calls of the
aws-encryption-sdk go through the client the cipher was given, so they are counted too). That event fires
once per API operation, before any retry, and ahead of handlers on the bare `before-call` prefix, which a
response-producing handler (botocore's Stubber, for one) would starve.

Operations that need an untimed step first (a capture consumes its admission, so every capture needs a fresh
one) give `Operation` a `before`: it runs outside the timed region and its AWS calls are not counted.

Writers get tables that do not grow without bound: moto deep-copies the whole table for every item of every
TransactWriteItems (its rollback copy), so a table that grew during the run would slow each later
transaction. `save` and `capture` therefore run on an `auto` workspace on a table of their own that is
replaced by a fresh one every ROTATE_EVERY runs (untimed); the reads, recall and the baselines share the main
table, on which nothing runs a write transaction while they are timed.

The turn benchmark runs K agent turns of 3 model rounds each (`remember:`, `note:`, a question) through the
real stack: a Temporal dev server, the local gateway in a thread on the same moto server, and the production
worker in-process with the scripted model. Each turn is admitted through `TurnService` (untimed) and timed
from `start_workflow` to its result. The baseline runs the same rounds as a plain in-process loop that calls
the same activity methods directly, as `AgentTurnWorkflow.run` would, against the same gateway and moto, no
Temporal; the two alternate turn by turn. Reported per model round: activities, AWS calls (the API's, and the
payload codec's KMS calls, which only Temporal pays) and the wall time, with its ratio to the plain loop.

To benchmark another operation, add one `Operation(name, baseline_name, fn)` line to `operations()`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy

from scripts.localstack.__main__ import start_moto
from scripts.localstack.gateway import Gateway, make_server
from scripts.localstack.resources import FAKE_CREDENTIALS, LocalResources, create_table, provision
from scripts.localstack.temporal import free_port, start_temporal, stop
from workflows.activities import TOOL_ACTIVITIES, TurnActivities
from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
from workflows.tools import CallOutcome, ToolName
from workflows.turn_workflow import run_turn
from workflows.worker import build_worker_parts, worker_in_thread
from workspace_memory import bootstrap, keys
from workspace_memory.access import ShareType
from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.adapters.temporal_codec import data_converter, payload_cipher
from workspace_memory.adapters.temporal_turns import RUN_TIMEOUT_SECONDS
from workspace_memory.admission import Admitted
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.capture import Outcome
from workspace_memory.policy import Mode
from workspace_memory.recall import RecallStatus
from workspace_memory.settings import Settings
from workspace_memory.turn_contract import WORKFLOW_NAME, TurnInput, TurnView
from workspace_memory.turns import TurnService

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DOCUMENT_BYTES = 2048
HISTORY_PAGE = 20
ROTATE_EVERY = 25
"""Runs of a writing benchmark (warm-up included) on one table before it moves to a fresh one."""
BASELINE_PK = "BENCH#baseline"
RAW_GET = "raw GetItem"
RAW_PUT = "raw PutItem"
OWNER = "bench-owner"
HOST = "127.0.0.1"

TURN_TABLE = "wm-bench-turns"
TURN_ROUNDS = 3
TEMPORAL_TURN = "Temporal workflow"
PLAIN_TURN = "plain in-process loop"
EXPECTED_TOOLS = ((ToolName.REMEMBER, Outcome.COMMITTED), (ToolName.NOTES_UPDATE, CallOutcome.SAVED))

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


def turn_message(label: str) -> str:
    """A user message the scripted model answers in exactly TURN_ROUNDS rounds: capture, note, answer."""
    return f"remember: - fact {label}\nnote: n {label}\nWhat do you know?"


def scheduled_activities(event_types: Iterable[int]) -> int:
    """How many activities a workflow history scheduled (retries reuse their scheduled event)."""
    return sum(1 for kind in event_types if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)


def turn_problems(view: TurnView) -> list[str]:
    """Why a benchmark turn did not run as designed (empty when it did): the numbers would measure
    something else. Names tools, outcomes and statuses only, never text."""
    problems = []
    if view.status != "completed":
        problems.append(f"status {view.status}")
    if view.rounds != TURN_ROUNDS:
        problems.append(f"{view.rounds} rounds, not {TURN_ROUNDS}")
    tools = tuple((o.tool, o.outcome) for o in view.tool_outcomes)
    if tools != EXPECTED_TOOLS:
        problems.append(f"tool outcomes {tools}")
    statuses = [r.status.value for r in view.receipts]
    if statuses != ["ok"] * view.rounds:
        problems.append(f"recall statuses {statuses}")
    return problems


class Rotation:
    """When a writing benchmark moves to a fresh table: before its first run, then every `every` runs."""

    def __init__(self, every: int) -> None:
        if every < 1:
            raise ValueError("a rotation needs at least one run per table")
        self.every = every
        self.runs = 0
        self.tables = 0

    def due(self) -> bool:
        """Counts one run; True when that run should start on a fresh table."""
        fresh = self.runs % self.every == 0
        self.runs += 1
        if fresh:
            self.tables += 1
        return fresh


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
    return format_table(["KMS calls per document read or recall", "reads", "KMS calls/read"], rows, "<><")


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


def render_turns(summaries: Sequence[TurnSummary]) -> str:
    rows = [
        [
            s.name,
            str(s.turns),
            format_count(s.rounds_per_turn),
            format_count(s.activities_per_round),
            f"{s.median_ms_per_round:.2f}",
            f"{s.p90_ms_per_round:.2f}",
            f"{s.median_ms_per_turn:.2f}",
            format_ratio(s.median_ratio, s.baseline_name),
        ]
        for s in summaries
    ]
    headers = [
        "turn",
        "turns",
        "rounds/turn",
        "activities/round",
        "median ms/round",
        "p90 ms/round",
        "median ms/turn",
        "median ms/round vs baseline",
    ]
    return format_table(headers, rows, "<>>>>>><")


def render_turn_calls(summaries: Sequence[TurnSummary]) -> str:
    rows = [[s.name, format_calls(s.api_calls_per_round), format_calls(s.codec_calls_per_round)] for s in summaries]
    return format_table(["turn", "AWS calls/round via the API", "KMS calls/round by the payload codec"], rows)


def report_json(
    summaries: Sequence[Summary],
    kms: Sequence[KmsScenario],
    meta: Mapping[str, Any],
    turns: Sequence[TurnSummary] = (),
) -> dict[str, Any]:
    reserved = {"operations", "kms_per_read", "turns"} & set(meta)
    if reserved:
        raise ValueError(f"meta may not use the report's own keys: {sorted(reserved)}")
    return {
        **meta,
        "operations": [asdict(s) for s in summaries],
        "kms_per_read": [asdict(k) for k in kms],
        "turns": [asdict(t) for t in turns],
    }


# -- measurement --------------------------------------------------------------------------------------------


class CallRecorder:
    """A botocore handler appending `service.Operation` for every API call made through the attached clients."""

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
        """A save to the main workspace (seeding its history; the KMS scenarios' "another process")."""
        commit = self.services.document.save(self.owner, self.workspace_id, self.content, self.head_version)
        self.head_version = commit.version.version


def auto_workspace(services: Services, name: str, content: str) -> tuple[str, int]:
    """A shared workspace in `auto` with AI on and `content` saved: what recall and capture run against."""
    workspace_id = services.access.create_workspace(OWNER, name, ShareType.SHARED)
    services.access.set_ai(OWNER, workspace_id, True)
    services.policy.set(OWNER, workspace_id, Mode.AUTO, 0)
    commit = services.document.save(OWNER, workspace_id, content, 0)
    return workspace_id, commit.version.version


def admit(services: Services, workspace_id: str, conversation_id: str) -> Admitted:
    return services.admission.admit(
        conversation_id=conversation_id, workspace_id=workspace_id, user_id=OWNER, idempotency_key=uuid.uuid4().hex
    )


@dataclass
class Scene:
    """An `auto` workspace on a table of its own, and its head version as the benchmark moved it."""

    services: Services
    workspace_id: str
    head_version: int


class RotatingScenes:
    """Scenes on tables that are replaced by fresh ones every `every` runs (see the module docstring: moto
    copies a whole table per transaction item). Tables are created and dropped untimed, from `before`."""

    def __init__(self, base: Services, prefix: str, content: str, every: int = ROTATE_EVERY) -> None:
        if base.settings.endpoint_url is None:
            raise ValueError("rotating tables needs the moto endpoint")
        self._base = base
        self._endpoint = base.settings.endpoint_url
        self._prefix = prefix
        self._content = content
        self._admin = _raw_client(base.settings)  # not attached to any recorder
        self.rotation = Rotation(every)
        self._scene: Scene | None = None

    @property
    def current(self) -> Scene:
        if self._scene is None:
            raise RuntimeError("no scene yet: call advance() first")
        return self._scene

    def advance(self) -> Scene:
        """Counts a run; moves to a fresh table (and drops the old one) when its turn has come."""
        if self.rotation.due():
            old = self._scene
            table = f"{self._prefix}-{self.rotation.tables}"
            create_table(self._endpoint, table)
            # The same clients (so the same call recorder) and a new cipher: a process writing to a new table.
            services = build_services(
                self._base.settings.model_copy(update={"table_name": table}), clients=self._base.clients
            )
            workspace_id, head = auto_workspace(services, self._prefix, self._content)
            self._scene = Scene(services, workspace_id, head)
            if old is not None:
                self._admin.delete_table(TableName=old.services.settings.table_name)
        return self.current


class SaveBench:
    """`save` of the sample document at the head, on rotating tables."""

    def __init__(self, scenes: RotatingScenes, content: str) -> None:
        self.scenes = scenes
        self._content = content

    def before(self) -> None:
        self.scenes.advance()

    def run(self) -> None:
        scene = self.scenes.current
        commit = scene.services.document.save(OWNER, scene.workspace_id, self._content, scene.head_version)
        scene.head_version = commit.version.version


class CaptureBench:
    """`capture` of one added line, on rotating tables; each run consumes an admission made in `before`."""

    def __init__(self, scenes: RotatingScenes) -> None:
        self.scenes = scenes
        self._admitted: Admitted | None = None
        self._count = 0

    def before(self) -> None:
        scene = self.scenes.advance()
        conversation = f"conv-bench-capture-{self.scenes.rotation.tables}"
        self._admitted = admit(scene.services, scene.workspace_id, conversation)

    def run(self) -> None:
        scene, admitted = self.scenes.current, self._admitted
        if admitted is None:
            raise RuntimeError("capture needs a fresh admission: run before() first")
        self._admitted = None
        self._count += 1
        adm = admitted.admission
        edits = [{"op": "add", "line": f"- captured fact {self._count}"}]
        result = scene.services.capture.capture(
            scene.workspace_id, adm.id, admitted.credential, edits, scene.head_version, f"memory:{adm.id}"
        )
        if result.outcome is not Outcome.COMMITTED or result.version is None:
            raise RuntimeError(f"capture did not commit: {result.outcome.value} {result.predicate}")
        scene.head_version = result.version


@dataclass(frozen=True)
class RecallScene:
    """The recall benchmark's `auto` workspace (main table) and the one admission all its recalls reuse."""

    workspace_id: str
    head_version: int
    admitted: Admitted

    def recall(self, services: Services) -> RecallStatus:
        adm = self.admitted.admission
        return services.recall.recall(self.workspace_id, adm.id, self.admitted.credential).status


def recall_scene(services: Services, content: str) -> RecallScene:
    workspace_id, head = auto_workspace(services, "recall", content)
    scene = RecallScene(workspace_id, head, admit(services, workspace_id, "conv-bench-recall"))
    status = scene.recall(services)
    if status is not RecallStatus.OK:
        raise RuntimeError(f"the recall benchmark's workspace recalls {status.value}, not ok")
    return scene


def operations(bench: Bench, recall: RecallScene, saves: SaveBench, captures: CaptureBench) -> list[Operation]:
    docs = bench.services.document
    owner, ws = bench.owner, bench.workspace_id
    s = bench.services
    return [
        Operation(RAW_GET, None, bench.raw_get),
        Operation(RAW_PUT, None, bench.raw_put),
        Operation(f"raw Query ({HISTORY_PAGE + 1} versions)", None, bench.raw_query),
        Operation("read", RAW_GET, partial(docs.read, owner, ws), ("kms.Decrypt",)),
        Operation("save", RAW_PUT, saves.run, before=saves.before),
        Operation("history", RAW_GET, partial(docs.history, owner, ws, HISTORY_PAGE, None)),
        Operation("recall", RAW_GET, partial(recall.recall, s), ("kms.Decrypt",)),
        Operation("capture", RAW_PUT, captures.run, ("kms.Decrypt",), before=captures.before),
    ]


def kms_per_read(settings: Settings, bench: Bench, recall: RecallScene, reads: int) -> list[KmsScenario]:
    """KMS calls per read and per recall as a separate Lambda (its own clients and cipher cache) sees them."""
    reader = build_services(settings)
    recorder = CallRecorder()
    recorder.attach(reader.clients.dynamodb, reader.clients.kms, reader.clients.key_store, bench.services.clients.kms)
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

    def recall_ok() -> None:
        status = recall.recall(reader)
        if status is not RecallStatus.OK:
            raise RuntimeError(f"recall answered {status.value}, not ok")

    recall_cold = kms_calls(recall_ok, 1)
    recall_warm = kms_calls(recall_ok, reads)
    # another process's capture (another conversation, so the recall admission keeps its slot) moves the head
    writer = admit(bench.services, recall.workspace_id, "conv-bench-recall-writer")
    adm = writer.admission
    edit = [{"op": "add", "line": "- captured by another process"}]
    captured = bench.services.capture.capture(
        recall.workspace_id, adm.id, writer.credential, edit, recall.head_version, f"memory:{adm.id}"
    )
    if captured.outcome is not Outcome.COMMITTED:
        raise RuntimeError(f"the head-moving capture did not commit: {captured.outcome.value}")
    recall_changed = kms_calls(recall_ok, 1)
    recall_changed_warm = kms_calls(recall_ok, reads)
    return [
        KmsScenario("cold process, first read", 1, cold),
        KmsScenario("warm process, unchanged head", reads, warm),
        KmsScenario("warm process, head changed by another process", 1, changed),
        KmsScenario("writer process, reading its own save", 1, writer_own),
        KmsScenario("recall: cold process (cold cipher), first recall", 1, recall_cold),
        KmsScenario("recall: warm process, unchanged head", reads, recall_warm),
        KmsScenario("recall: warm process, head changed by another process's capture", 1, recall_changed),
        KmsScenario("recall: warm process, unchanged head again after that", reads, recall_changed_warm),
    ]


# -- agent turns: Temporal against a plain loop of the same activities ------------------------------------------


class CapturingRunner:
    """A `TurnRunner` that keeps what ingress would start; the benchmark then runs it one way or the other."""

    def __init__(self) -> None:
        self.started: list[TurnInput] = []

    def start(self, turn: TurnInput) -> None:
        self.started.append(turn)

    def view(self, turn_id: str) -> TurnView | None:  # noqa: ARG002 - the benchmark holds the results itself
        return None


async def plain_turn(activities: TurnActivities, turn: TurnInput) -> tuple[TurnView, int]:
    """`AgentTurnWorkflow`'s own loop (`run_turn`) with the same activity methods called directly: no Temporal,
    no payload codec, no retries. Returns the view and the number of activities run."""
    ran = 0

    async def model_round(data: RoundInput) -> RoundOutput:
        nonlocal ran
        ran += 1
        return activities.model_round(data)

    async def tool(name: ToolName, data: ToolInput) -> ToolRun:
        nonlocal ran
        ran += 1
        return TOOL_ACTIVITIES[name](activities, data)

    view = TurnView(conversation_id=turn.conversation_id, status="running")
    return await run_turn(turn, view, model_round, tool), ran


class TurnScenes:
    """Admits each benchmark turn through `TurnService` (as the turns route does) on a fresh conversation and
    session, in an `auto` workspace that is replaced every ROTATE_EVERY turns so its document stays small."""

    def __init__(self, api: Services, content: str) -> None:
        self._api = api
        self._content = content
        self._runner = CapturingRunner()
        self._ingress = TurnService(api.table, api.admission, self._runner)
        self.rotation = Rotation(ROTATE_EVERY)
        self._workspace_id = ""

    def admit(self, label: str) -> TurnInput:
        if self.rotation.due():
            self._workspace_id, _ = auto_workspace(self._api, f"turns-{self.rotation.tables}", self._content)
        self._ingress.start(
            user_id=OWNER,
            conversation_id=f"conv-bench-{label}",
            workspace_id=self._workspace_id,
            message=turn_message(label),
            idempotency_key=uuid.uuid4().hex,
            memory_state=None,
            key_session_id=None,
            session_id=f"sess-bench-{label}",
        )
        return self._runner.started[-1]


@dataclass(frozen=True)
class TurnRig:
    """What both ways of running a turn share: the same gateway, activities and call recorders."""

    settings: Settings
    scenes: TurnScenes
    activities: TurnActivities
    api_calls: CallRecorder
    codec_calls: CallRecorder
    starter_cipher: KmsCipher


def _checked(view: TurnView, how: str) -> TurnView:
    problems = turn_problems(view)
    if problems:
        raise RuntimeError(f"a benchmark turn ({how}) did not run as designed: {'; '.join(problems)}")
    return view


async def _temporal_turn(rig: TurnRig, client: Client, turn: TurnInput) -> TurnSample:
    """Timed from `start_workflow` (as ingress starts it) to the result; activities counted from the history."""
    api_mark, codec_mark = len(rig.api_calls.calls), len(rig.codec_calls.calls)
    start = time.perf_counter_ns()
    handle = await client.start_workflow(
        WORKFLOW_NAME,
        turn,
        id=turn.turn_id,
        task_queue=rig.settings.temporal_task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        run_timeout=timedelta(seconds=RUN_TIMEOUT_SECONDS),
        result_type=TurnView,
    )
    view: TurnView = await handle.result()
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    api, codec = rig.api_calls.since(api_mark), rig.codec_calls.since(codec_mark)
    history = await handle.fetch_history()
    activities = scheduled_activities(event.event_type for event in history.events)
    return TurnSample(elapsed_ms, _checked(view, TEMPORAL_TURN).rounds, activities, api, codec)


async def _plain_turn(rig: TurnRig, turn: TurnInput) -> TurnSample:
    api_mark, codec_mark = len(rig.api_calls.calls), len(rig.codec_calls.calls)
    start = time.perf_counter_ns()
    view, activities = await plain_turn(rig.activities, turn)
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    api, codec = rig.api_calls.since(api_mark), rig.codec_calls.since(codec_mark)
    return TurnSample(elapsed_ms, _checked(view, PLAIN_TURN).rounds, activities, api, codec)


async def _run_turns(rig: TurnRig, turns: int, warmup: int) -> list[tuple[str, list[TurnSample]]]:
    """Alternates the two ways turn by turn (and which goes first), so drift falls on both alike."""
    client = await Client.connect(
        rig.settings.temporal_address,
        namespace=rig.settings.temporal_namespace,
        data_converter=data_converter(rig.starter_cipher),
    )
    samples: dict[str, list[TurnSample]] = {TEMPORAL_TURN: [], PLAIN_TURN: []}
    for number in range(warmup + turns):
        order = (TEMPORAL_TURN, PLAIN_TURN) if number % 2 == 0 else (PLAIN_TURN, TEMPORAL_TURN)
        for how in order:
            short = "temporal" if how == TEMPORAL_TURN else "plain"
            turn = rig.scenes.admit(f"{short}-{number}")  # untimed, its calls not counted
            if how == TEMPORAL_TURN:
                sample = await _temporal_turn(rig, client, turn)
            else:
                sample = await _plain_turn(rig, turn)
            if number >= warmup:
                samples[how].append(sample)
    return [(TEMPORAL_TURN, samples[TEMPORAL_TURN]), (PLAIN_TURN, samples[PLAIN_TURN])]


@dataclass(frozen=True)
class TurnReport:
    text: str
    meta: dict[str, Any]
    summaries: list[TurnSummary]


def turn_benchmark(resources: LocalResources, content: str, turns: int, warmup: int) -> TurnReport:
    """Temporal dev server, gateway thread and in-process worker on the given moto server; all stopped on exit."""
    create_table(resources.endpoint_url, TURN_TABLE)
    local = LocalResources(resources.endpoint_url, TURN_TABLE, resources.kms_key_arn, resources.key_store_table_name)
    with ExitStack() as stack:  # unwinds worker, gateway, Temporal
        temporal, address = start_temporal(free_port(), None, None)
        stack.callback(stop, temporal)
        # The gateway's handlers build their services from this process's environment on first use; they log
        # at WARNING so that a line per request does not interleave with the report.
        os.environ.update({**local.environment(), "TEMPORAL_ADDRESS": address, "POWERTOOLS_LOG_LEVEL": "WARNING"})
        bootstrap.services.cache_clear()
        server = make_server(Gateway(), HOST, 0)
        stack.callback(server.server_close)
        stack.callback(server.shutdown)
        threading.Thread(target=server.serve_forever, name="bench-gateway", daemon=True).start()
        gateway_url = f"http://{HOST}:{server.server_address[1]}"
        settings = Settings(
            table_name=TURN_TABLE,
            kms_key_id=resources.kms_key_arn,
            key_store_table_name=resources.key_store_table_name,
            endpoint_url=resources.endpoint_url,
            temporal_address=address,
            automation_base_url=gateway_url,
            automation_auth="dev:bench",
            model_provider="scripted",
        )
        api = bootstrap.services()  # the very instance the gateway's handlers use
        api_calls, codec_calls = CallRecorder(), CallRecorder()
        api_calls.attach(api.clients.dynamodb, api.clients.kms, api.clients.key_store)
        # The payload codec's ciphers get clients of their own, so their KMS calls are counted apart: the
        # worker's (workflow and activities) and the starter's (the turns route's, in production).
        worker_kms, starter_kms = build_clients(settings).kms, build_clients(settings).kms
        codec_calls.attach(worker_kms, starter_kms)
        parts = dataclasses.replace(
            build_worker_parts(settings), converter=data_converter(payload_cipher(worker_kms, resources.kms_key_arn))
        )
        stack.enter_context(worker_in_thread(settings, parts))
        rig = TurnRig(
            settings,
            TurnScenes(api, content),
            parts.activities,
            api_calls,
            codec_calls,
            KmsCipher(starter_kms, resources.kms_key_arn),
        )
        runs = asyncio.run(_run_turns(rig, turns, warmup))
        workspaces = rig.scenes.rotation.tables
    summaries = summarize_turns(runs, PLAIN_TURN)
    by_name = {s.name: s for s in summaries}
    overhead = by_name[TEMPORAL_TURN].median_ms_per_round - by_name[PLAIN_TURN].median_ms_per_round
    text = "\n".join(
        [
            f"Agent turns: {turns} timed turns each way after {warmup} warm-up each, alternating; every turn a "
            f"fresh conversation, admission and session, admitted untimed through TurnService",
            f"  message {turn_message('<i>')!r} ({TURN_ROUNDS} model rounds: capture, note, answer); scripted model",
            f"  Temporal dev server {address}, worker in-process; gateway {gateway_url} on the same moto server "
            f"(table {TURN_TABLE}, {workspaces} workspace(s), a fresh one every {ROTATE_EVERY} turns), its "
            "responses written with TCP_NODELAY (the gateway's own setting)",
            "  Temporal: start_workflow to result, activities counted from the history (ActivityTaskScheduled);",
            "  plain loop: AgentTurnWorkflow.run's rounds calling the same activity methods directly, no Temporal.",
            "",
            render_turns(summaries),
            "",
            render_turn_calls(summaries),
            "",
            f"Temporal's overhead: {overhead:.2f} ms per model round (difference of the medians).",
        ]
    )
    meta = {
        "timed_turns": turns,
        "turn_warmup": warmup,
        "turn_rounds": TURN_ROUNDS,
        "turn_message": turn_message("<i>"),
        "temporal_overhead_ms_per_round": overhead,
    }
    return TurnReport(text, meta, summaries)


# -- the run ------------------------------------------------------------------------------------------------


def isolate_environment() -> None:
    """Fake credentials and no profile or config file: nothing here can sign a request for real AWS."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


def run(endpoint: str, iterations: int, warmup: int, turns: int, turn_warmup: int) -> tuple[str, dict[str, Any]]:
    resources = provision(endpoint)
    settings = Settings(
        table_name=resources.table_name,
        kms_key_id=resources.kms_key_arn,
        key_store_table_name=resources.key_store_table_name,
        endpoint_url=resources.endpoint_url,
    )
    services = build_services(settings)
    workspace_id = services.access.create_workspace(OWNER, "bench", ShareType.SHARED)
    content = sample_document()
    bench = Bench(services, _raw_client(settings), OWNER, workspace_id, content, 0, b"")
    for _ in range(HISTORY_PAGE + 1):  # a full history page from the first round on
        bench.save()
    head = services.table.get(*keys.head(workspace_id))
    assert head is not None
    bench.blob = os.urandom(len(head["ciphertext"]))  # ciphertext is incompressible; so is this
    bench.raw_put()
    recall = recall_scene(services, content)
    saves = SaveBench(RotatingScenes(services, "bench-save", content), content)
    captures = CaptureBench(RotatingScenes(services, "bench-capture", content))

    recorder = CallRecorder()
    recorder.attach(services.clients.dynamodb, services.clients.kms, services.clients.key_store, bench.raw)
    summaries = summarize(measure(operations(bench, recall, saves, captures), recorder, iterations, warmup))
    kms = kms_per_read(settings, bench, recall, iterations)

    meta: dict[str, Any] = {
        "iterations": iterations,
        "warmup": warmup,
        "document_bytes": len(content.encode("utf-8")),
        "ciphertext_bytes": len(bench.blob),
        "history_page": HISTORY_PAGE,
        "rotate_every": ROTATE_EVERY,
        "save_tables": saves.scenes.rotation.tables,
        "capture_tables": captures.scenes.rotation.tables,
    }
    lines = [
        f"workspace-memory bench: {iterations} timed iterations per operation after {warmup} warm-up, "
        "interleaved round-robin",
        f"moto server {endpoint} (serialized); document {meta['document_bytes']} B, "
        f"ciphertext {meta['ciphertext_bytes']} B (baseline items carry a binary attribute of that size)",
        f"save and capture run in an `auto` workspace on a table of their own, replaced by a fresh one every "
        f"{ROTATE_EVERY} runs ({meta['save_tables']} and {meta['capture_tables']} tables): moto copies the whole "
        "table per transaction item",
        "capture: each run consumes an admission made before it, untimed and not counted; recall: one admission "
        "reused, in an `auto` workspace with AI on",
        "",
        render(summaries),
        "",
        render_kms(kms),
    ]
    turn_report = turn_benchmark(resources, content, turns, turn_warmup) if turns > 0 else None
    if turn_report is not None:
        lines += ["", turn_report.text]
        meta.update(turn_report.meta)
    lines += ["", "moto latencies are not AWS latencies: compare the calls per operation and the ratios."]
    data = report_json(summaries, kms, meta, turn_report.summaries if turn_report is not None else ())
    return "\n".join(lines), data


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
    parser.add_argument("--turns", type=_non_negative, default=10, help="timed agent turns each way (10; 0: none)")
    parser.add_argument("--turn-warmup", type=_non_negative, default=1, help="untimed turns each way first (1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    isolate_environment()
    moto, endpoint = start_moto(0)
    try:
        text, data = run(endpoint, args.iterations, args.warmup, args.turns, args.turn_warmup)
    finally:
        stop(moto)
    print(text, flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", flush=True)


if __name__ == "__main__":
    main()
