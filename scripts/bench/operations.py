"""The service operations against raw-DynamoDB baselines: read, save, history, recall and capture, timed
round-robin with their AWS calls counted, and the KMS calls per read as a separate process sees them.

Writers get tables that do not grow without bound (moto copies the whole table per transaction item):
`save` and `capture` run on an `auto` workspace on a table of their own that is replaced by a fresh one
every ROTATE_EVERY runs, untimed (`scripts.bench.scenes`; the writing benchmarks are in
`scripts.bench.writers`); the reads, recall and the baselines share the main table, on which nothing runs a
write transaction while they are timed.

The baselines: `raw GetItem` and `raw PutItem` call a bare boto3 client with an item of the ciphertext's size;
`Query via the adapter` is the query `history` makes, through the table adapter alone (`DynamoTable.query`:
the boto3 resource client's type conversion and a thin wrapper, no decryption), so that no key condition is
spelt outside the adapter; it tells moto's Query cost from the service's.

Entries (docs/architecture.md#entries): `entry create` and `entry supersede` write on rotating tables like `save` (a
supersede scene seeds its one chain untimed); `entry list` lists a page of `ENTRY_PAGE` entries of a workspace seeded
with that many (baseline: the adapter's Query); `recall + index` recalls in a workspace holding `INDEX_ENTRIES`
entries, so its difference to `recall` is what the index adds (and its KMS calls warm are in the KMS table);
`recall + index + selective` is the same recall for an admission that carries the turn's message, so its
baseline `recall + index` gives the model round overhead of selective recall (search over the entries).

To benchmark another operation, add one `Operation(name, baseline_name, fn)` line to `operations()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from scripts.bench.report import acceptance, render, render_acceptance, render_kms
from scripts.bench.scenes import (
    OWNER,
    ROTATE_EVERY,
    RotatingScenes,
    admit,
    auto_workspace,
    capture,
    raw_client,
    seed_entries,
)
from scripts.bench.stats import CallRecorder, KmsScenario, Operation, Summary, calls_per_op, measure, summarize
from scripts.bench.writers import CaptureBench, EntryCreateBench, EntrySupersedeBench, SaveBench
from scripts.localstack.resources import LocalResources
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.edits import AddEdit
from workspace_memory.entries.model import Filters
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.recall import SELECTED_K, RecallStatus
from workspace_memory.workspaces.access import ShareType

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

HISTORY_PAGE = 20
BASELINE_PK = "BENCH#baseline"
RAW_GET = "raw GetItem"
RAW_PUT = "raw PutItem"
ENTRY_PAGE = 20
INDEX_ENTRIES = 100
SELECTIVE_MESSAGE = "Who owns the on-call rotation this week, and when do deploys go out?"
"""The turn message of the selective recall benchmark: every seeded entry matches it, so 5 are selected."""


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

    def adapter_query(self) -> None:
        """The query `history` makes, through the table adapter alone (see the module docstring)."""
        ws = keys.ws(self.workspace_id)
        self.services.table.query(ws, keys.VERSION_PREFIX, limit=HISTORY_PAGE + 1, newest_first=True)

    def save(self) -> None:
        """A save to the main workspace (seeding its history; the KMS scenarios' "another process")."""
        commit = self.services.document.save(self.owner, self.workspace_id, self.content, self.head_version)
        self.head_version = commit.version.version


@dataclass(frozen=True)
class RecallScene:
    """The recall benchmark's `auto` workspace (main table) and the one admission all its recalls reuse."""

    workspace_id: str
    head_version: int
    admitted: Admitted

    def recall(self, services: Services) -> RecallStatus:
        adm = self.admitted.admission
        return services.recall.recall(self.workspace_id, adm.id, self.admitted.credential).status

    def recall_ok(self, services: Services) -> None:
        status = self.recall(services)
        if status is not RecallStatus.OK:
            raise RuntimeError(f"recall in the recall benchmark's workspace answered {status.value}, not ok")


def recall_scene(services: Services, content: str) -> RecallScene:
    workspace_id, head = auto_workspace(services, "recall", content)
    scene = RecallScene(workspace_id, head, admit(services, workspace_id, "conv-bench-recall"))
    scene.recall_ok(services)
    return scene


@dataclass(frozen=True)
class EntryScenes:
    """The entry operations' state: the writers on rotating tables, a listed workspace, the index recall."""

    creates: EntryCreateBench
    supersedes: EntrySupersedeBench
    listed_workspace: str
    index_recall: RecallScene
    selective_recall: RecallScene
    """The index workspace again, under an admission with a message: selective recall on top of the index."""


def operations(
    bench: Bench, recall: RecallScene, saves: SaveBench, captures: CaptureBench, entries: EntryScenes
) -> list[Operation]:
    docs = bench.services.document
    owner, ws = bench.owner, bench.workspace_id
    s = bench.services
    entry_list = partial(s.entries.list_entries, owner, entries.listed_workspace, Filters(), ENTRY_PAGE, None)
    return [
        Operation(RAW_GET, None, bench.raw_get),
        Operation(RAW_PUT, None, bench.raw_put),
        Operation(f"Query via the adapter ({HISTORY_PAGE + 1} versions)", None, bench.adapter_query),
        Operation("read", RAW_GET, partial(docs.read, owner, ws), ("kms.Decrypt",)),
        Operation("save", RAW_PUT, saves.run, ("kms.Decrypt",), before=saves.before),
        Operation("history", RAW_GET, partial(docs.history, owner, ws, HISTORY_PAGE, None)),
        Operation("recall", RAW_GET, partial(recall.recall, s), ("kms.Decrypt",)),
        Operation("capture", RAW_PUT, captures.run, ("kms.Decrypt",), before=captures.before),
        Operation("entry create", RAW_PUT, entries.creates.run, ("kms.Decrypt",), before=entries.creates.before),
        Operation(
            "entry supersede", RAW_PUT, entries.supersedes.run, ("kms.Decrypt",), before=entries.supersedes.before
        ),
        Operation(f"entry list ({ENTRY_PAGE})", f"Query via the adapter ({HISTORY_PAGE + 1} versions)", entry_list),
        Operation(
            f"recall + index ({INDEX_ENTRIES} entries)",
            RAW_GET,
            partial(entries.index_recall.recall, s),
            ("kms.Decrypt",),
        ),
        Operation(
            f"recall + index + selective ({INDEX_ENTRIES} entries)",
            f"recall + index ({INDEX_ENTRIES} entries)",
            partial(entries.selective_recall.recall, s),
            ("kms.Decrypt",),
        ),
    ]


def kms_per_read(
    settings: Settings, bench: Bench, recall: RecallScene, index_recall: RecallScene, reads: int
) -> list[KmsScenario]:
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
    recall_ok = partial(recall.recall_ok, reader)
    recall_cold = kms_calls(recall_ok, 1)
    recall_warm = kms_calls(recall_ok, reads)
    # another process's capture (another conversation, so the recall admission keeps its slot) moves the head
    writer = admit(bench.services, recall.workspace_id, "conv-bench-recall-writer")
    capture(
        bench.services,
        recall.workspace_id,
        writer,
        [AddEdit(line="- captured by another process")],
        recall.head_version,
    )
    recall_changed = kms_calls(recall_ok, 1)
    recall_changed_warm = kms_calls(recall_ok, reads)
    index_ok = partial(index_recall.recall_ok, reader)
    index_cold = kms_calls(index_ok, 1)
    index_warm = kms_calls(index_ok, reads)
    return [
        KmsScenario("cold process, first read", 1, cold),
        KmsScenario("warm process, unchanged head", reads, warm),
        KmsScenario("warm process, head changed by another process", 1, changed),
        KmsScenario("writer process, reading its own save", 1, writer_own),
        KmsScenario("recall: cold process (cold cipher), first recall", 1, recall_cold),
        KmsScenario("recall: warm process, unchanged head", reads, recall_warm),
        KmsScenario("recall: warm process, head changed by another process's capture", 1, recall_changed),
        KmsScenario("recall: warm process, unchanged head again after that", reads, recall_changed_warm),
        KmsScenario(f"recall + index of {INDEX_ENTRIES} entries: first in this process", 1, index_cold),
        KmsScenario(f"recall + index of {INDEX_ENTRIES} entries: warm process", reads, index_warm),
    ]


@dataclass(frozen=True)
class OperationsReport:
    text: str
    meta: dict[str, Any]
    summaries: list[Summary]
    kms: list[KmsScenario]
    workspace_id: str
    """The benchmark's main workspace (it has its branch key): what the keyring figures encrypt under."""


def settings_for(resources: LocalResources) -> Settings:
    """What a function of the template would build its services from, on `resources`."""
    return Settings(
        table_name=resources.table_name,
        kms_key_id=resources.kms_key_arn,
        key_store_table_name=resources.key_store_table_name,
        endpoint_url=resources.endpoint_url,
    )


def operations_benchmark(resources: LocalResources, content: str, iterations: int, warmup: int) -> OperationsReport:
    """Every operation on `resources` (a table of its own, the stack's key), then the KMS scenarios."""
    settings = settings_for(resources)
    services = build_services(settings)
    workspace_id = services.access.create_workspace(OWNER, "bench", ShareType.SHARED)
    bench = Bench(services, raw_client(settings), OWNER, workspace_id, content, 0, b"")
    for _ in range(HISTORY_PAGE + 1):  # a full history page from the first round on
        bench.save()
    head = services.table.get(*keys.head(workspace_id))
    assert head is not None
    bench.blob = os.urandom(len(head["ciphertext"]))  # ciphertext is incompressible; so is this
    bench.raw_put()
    recall = recall_scene(services, content)
    saves = SaveBench(RotatingScenes(services, "bench-save", content), content)
    captures = CaptureBench(RotatingScenes(services, "bench-capture", content))
    listed = services.access.create_workspace(OWNER, "bench-entries", ShareType.SHARED)
    seed_entries(services, listed, ENTRY_PAGE)
    index_workspace, index_head = auto_workspace(services, "recall-index", content)
    seed_entries(services, index_workspace, INDEX_ENTRIES)
    index_recall = RecallScene(index_workspace, index_head, admit(services, index_workspace, "conv-bench-index"))
    index_recall.recall_ok(services)
    selective = admit(services, index_workspace, "conv-bench-selective", SELECTIVE_MESSAGE)
    selective_recall = RecallScene(index_workspace, index_head, selective)
    selective_recall.recall_ok(services)
    picked = services.recall.recall(index_workspace, selective.admission.id, selective.credential).selected
    if len(picked) != SELECTED_K:
        raise RuntimeError(f"selective recall in the benchmark picked {len(picked)} entries, not {SELECTED_K}")
    entries = EntryScenes(
        EntryCreateBench(RotatingScenes(services, "bench-entry-create", content)),
        EntrySupersedeBench(RotatingScenes(services, "bench-entry-supersede", content)),
        listed,
        index_recall,
        selective_recall,
    )

    recorder = CallRecorder()
    recorder.attach(services.clients.dynamodb, services.clients.kms, services.clients.key_store, bench.raw)
    summaries = summarize(measure(operations(bench, recall, saves, captures, entries), recorder, iterations, warmup))
    kms = kms_per_read(settings, bench, recall, index_recall, iterations)
    meta: dict[str, Any] = {
        "iterations": iterations,
        "warmup": warmup,
        "document_bytes": len(content.encode("utf-8")),
        "ciphertext_bytes": len(bench.blob),
        "history_page": HISTORY_PAGE,
        "rotate_every": ROTATE_EVERY,
        "save_tables": saves.scenes.rotation.tables,
        "capture_tables": captures.scenes.rotation.tables,
        "entry_page": ENTRY_PAGE,
        "index_entries": INDEX_ENTRIES,
    }
    lines = [
        f"Operations: {iterations} timed iterations per operation after {warmup} warm-up, interleaved round-robin",
        f"moto server {resources.endpoint_url} (serialized); document {meta['document_bytes']} B, "
        f"ciphertext {meta['ciphertext_bytes']} B (baseline items carry a binary attribute of that size)",
        f"save and capture run in an `auto` workspace on a table of their own, replaced by a fresh one every "
        f"{ROTATE_EVERY} runs ({meta['save_tables']} and {meta['capture_tables']} tables): moto copies the whole "
        "table per transaction item",
        "capture: each run consumes an admission made before it, untimed and not counted; recall: one admission "
        "reused, in an `auto` workspace with AI on",
        "",
        render(summaries),
        "",
        render_acceptance(acceptance(summaries)),
        "",
        render_kms(kms),
    ]
    return OperationsReport("\n".join(lines), meta, summaries, kms, workspace_id)
