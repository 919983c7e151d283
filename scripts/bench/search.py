"""Entry search (issue 11): latency at 100, 1,000 and 5,000 entries, warm and cold, in one run.

Each size has a workspace of its own, seeded through `EntryService.create` (the real write path: redaction,
the vector computed and sealed with the revision, one transaction each; the seeding time is printed).
Then, per size:

- **warm**: `SearchService.search` with the workspace's index held (the baseline of the size), rotating
  queries; the AWS calls of each search are counted;
- **cold, no snapshot**: a fresh process state each run (`build_services`: new clients, an empty branch-key
  cache, empty `WarmIndexes`; built untimed), its first search timed: membership, the metadata Query, every
  revision fetched and decrypted, the index built;
- **cold, snapshot**: the same, but the service reads the workspace's encrypted snapshot (one decryption)
  and decrypts only what is newer (nothing here). The snapshot is stored by one untimed build first; its
  store time and size are printed.

And the ranking alone in-process (`SearchService.ranked`, the caller already read), the warm index's memory
(`WarmIndexes.nbytes`). Targets: the ranking ≤ 5 ms in-process and p50 ≤ 50 ms warm at 5,000 entries,
a cold build ≤ 2 s. Moto latencies are not AWS latencies: the calls per search are the portable part.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scripts.bench.report import format_calls, format_table
from scripts.bench.stats import CallRecorder, calls_per_op, median, p90
from workspace_memory.bootstrap import Services, build_embedder, build_services
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryType
from workspace_memory.search import search_snapshot
from workspace_memory.search.entry_search import SearchFilters, SearchService, WarmIndexes, entries_revision
from workspace_memory.store import keys, search_queries
from workspace_memory.workspaces.access import ShareType, load_caller

SIZES = (100, 1000, 5000)
OWNER = "bench-search-owner"
TOPICS = (
    ("deploy", "releases go out on Tuesdays after the change review"),
    ("billing", "customers are invoiced in euros on the first of the month"),
    ("oncall", "the pager rotates weekly between the platform engineers"),
    ("database", "postgres backups run nightly and are kept for thirty days"),
    ("security", "access keys are rotated every ninety days by the owners"),
    ("style", "documentation uses British spelling and sentence case"),
    ("hiring", "interview loops have four stages and a written exercise"),
    ("network", "the VPN gateway fails over to the second region"),
)
QUERIES = (
    "when do we ship releases",
    "invoice currency",
    "who holds the pager this week",
    "backup retention",
    "key rotation policy",
    "spelling in the docs",
    "interview process",
    "vpn failover region",
)


def draft(n: int) -> Draft:
    """A realistic entry: one of eight topics, numbered, with a short body (~300 bytes of text in all)."""
    topic, line = TOPICS[n % len(TOPICS)]
    body = f"Note {n} on {topic}: {line}. Owners review it each quarter; exceptions need a ticket. " * 2
    return Draft(EntryType.FACT, EntryText(f"{topic.title()} note {n}", f"{line} ({n})", body))


@dataclass(frozen=True)
class SizeResult:
    entries: int
    seed_seconds: float
    ranked_ms: list[float]
    """The ranking alone, in-process (`SearchService.ranked` on the held index, the caller already read)."""
    warm_ms: list[float]
    warm_calls: dict[str, float]
    cold_plain_ms: list[float]
    cold_plain_calls: dict[str, float]
    cold_snapshot_ms: list[float]
    cold_snapshot_calls: dict[str, float]
    snapshot_store_ms: float
    snapshot_bytes: int
    snapshot_chunks: int
    index_bytes: int


def _clients(services: Services) -> tuple[Any, ...]:
    return services.clients.dynamodb, services.clients.kms, services.clients.key_store


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def _cold(settings: Settings, recorder: CallRecorder, snapshot_after: int | None) -> tuple[Services, SearchService]:
    """A new process's state: new clients, a cold branch-key cache, no warm index (built untimed)."""
    fresh = build_services(settings)
    recorder.attach(*_clients(fresh))
    embedder = build_embedder(settings)  # the model itself is loaded once per process, as in a Lambda
    return fresh, SearchService(
        fresh.table, fresh.cipher, fresh.clock, embedder, WarmIndexes(), snapshot_after=snapshot_after
    )


def measure_size(settings: Settings, entries: int, iterations: int, cold_runs: int) -> SizeResult:
    services = build_services(settings)
    ws = services.access.create_workspace(OWNER, f"search-{entries}", ShareType.SHARED)
    start = time.perf_counter()
    for n in range(entries):
        services.entries.create(OWNER, ws, draft(n))
    seed_seconds = time.perf_counter() - start
    recorder = CallRecorder()
    recorder.attach(*_clients(services))
    queries = itertools.cycle(QUERIES)

    plain: list[float] = []
    plain_calls: list[Sequence[str]] = []
    for _ in range(cold_runs):
        _, search = _cold(settings, recorder, None)
        mark = len(recorder.calls)
        plain.append(_timed(lambda s=search: s.search(OWNER, ws, next(queries), 5)))  # type: ignore[misc]
        plain_calls.append(recorder.since(mark))

    # one untimed build stores the snapshot (as the first cold process after many writes would)
    fresh, writer = _cold(settings, recorder, 0)
    store_ms = _timed(lambda: writer.search(OWNER, ws, next(queries), 5))
    pointer = search_queries.snapshot_pointer(fresh.table, ws, search_snapshot.FORMAT)
    snapped: list[float] = []
    snapped_calls: list[Sequence[str]] = []
    for _ in range(cold_runs):
        _, search = _cold(settings, recorder, 50)
        mark = len(recorder.calls)
        snapped.append(_timed(lambda s=search: s.search(OWNER, ws, next(queries), 5)))  # type: ignore[misc]
        snapped_calls.append(recorder.since(mark))

    services.search.search(OWNER, ws, next(queries), 5)  # warm the process's own index
    caller, (counter,) = load_caller(services.table, ws, OWNER, [keys.entry_counter(ws)])
    revision = entries_revision(counter)
    ranked = [
        _timed(lambda: services.search.ranked(caller, revision, next(queries), 5, SearchFilters()))
        for _ in range(iterations)
    ]
    warm: list[float] = []
    warm_calls: list[Sequence[str]] = []
    for _ in range(iterations):
        mark = len(recorder.calls)
        warm.append(_timed(lambda: services.search.search(OWNER, ws, next(queries), 5)))
        warm_calls.append(recorder.since(mark))
    return SizeResult(
        entries=entries,
        seed_seconds=seed_seconds,
        ranked_ms=ranked,
        warm_ms=warm,
        warm_calls=calls_per_op(warm_calls),
        cold_plain_ms=plain,
        cold_plain_calls=calls_per_op(plain_calls),
        cold_snapshot_ms=snapped,
        cold_snapshot_calls=calls_per_op(snapped_calls),
        snapshot_store_ms=store_ms,
        snapshot_bytes=0 if pointer is None else pointer.bytes,
        snapshot_chunks=0 if pointer is None else pointer.chunks,
        index_bytes=services.search.warm.nbytes,
    )


def render(results: Sequence[SizeResult], iterations: int, cold_runs: int) -> str:
    rows = []
    for r in results:
        for name, values, calls in (
            ("warm, ranking in-process", r.ranked_ms, {}),
            ("warm", r.warm_ms, r.warm_calls),
            ("cold, no snapshot", r.cold_plain_ms, r.cold_plain_calls),
            ("cold, snapshot", r.cold_snapshot_ms, r.cold_snapshot_calls),
        ):
            rows.append(
                [
                    f"{r.entries:,}",
                    name,
                    f"{median(values):.2f}",
                    f"{p90(values):.2f}",
                    f"{median(values) / median(r.warm_ms):.1f}x",
                    format_calls(calls),
                ]
            )
    table = format_table(["entries", "search", "p50 ms", "p90 ms", "vs warm", "AWS calls/search"], rows, "><>>><")
    sizes = format_table(
        ["entries", "seeded in s", "index MiB (warm)", "snapshot KiB", "chunks", "snapshot store ms"],
        [
            [
                f"{r.entries:,}",
                f"{r.seed_seconds:.1f}",
                f"{r.index_bytes / 2**20:.2f}",
                f"{r.snapshot_bytes / 1024:.0f}",
                str(r.snapshot_chunks),
                f"{r.snapshot_store_ms:.0f}",
            ]
            for r in results
        ],
        ">>>>>>",
    )
    biggest = results[-1]
    checks = [
        (f"warm ranking p50 <= 5 ms in-process at {biggest.entries:,} entries", median(biggest.ranked_ms) <= 5),
        (f"warm p50 <= 50 ms at {biggest.entries:,} entries", median(biggest.warm_ms) <= 50),
        (f"cold build with the snapshot <= 2 s at {biggest.entries:,}", median(biggest.cold_snapshot_ms) <= 2000),
        (f"cold build without it <= 2 s at {biggest.entries:,}", median(biggest.cold_plain_ms) <= 2000),
    ]
    return "\n".join(
        [
            f"Entry search: {iterations} warm searches and {cold_runs} cold builds (new process state) per size, "
            "k=5, eight rotating queries; entries seeded through EntryService",
            "",
            table,
            "",
            sizes,
            "",
            *(f"{'PASS' if ok else 'MISS'}  {name}" for name, ok in checks),
        ]
    )


def search_benchmark(
    settings: Settings, iterations: int, cold_runs: int, sizes: Sequence[int] = SIZES
) -> tuple[str, list[SizeResult]]:
    results = [measure_size(settings, n, iterations, cold_runs) for n in sizes]
    return render(results, iterations, cold_runs), results
