"""`make bench`: cold imports, operations and agent turns, each against a baseline measured in the same run.

Not a test: it measures the handlers' cold imports first (fresh interpreters, before anything else runs),
then starts its own local stack (`LocalStack`: the moto server, serialized, then the gateway, the Temporal
dev server and an in-process worker for the turns), builds the services exactly as a Lambda cold start does,
and prints tables. Absolute moto latencies say little about AWS; the portable results are the AWS calls per
operation and the ratios to the baselines.

    .venv/bin/python -m scripts.bench [--iterations 200] [--warmup 5] [--keyring-pairs 200] [--turns 10]
                                      [--turn-warmup 1] [--import-runs 7] [--mcp-calls 50] [--search-iterations 100]
                                      [--search-cold-runs 3] [--search-sizes 100,1000,5000]
                                      [--consolidation-sizes 100,1000] [--json PATH]

AWS calls are counted by a botocore `before-call.*.*` handler on every client in play (the KMS calls of the
aws-encryption-sdk go through the client the cipher was given, so they are counted too). Operations that
need an untimed step first (a capture consumes its admission) give `Operation` a `before`: it runs outside
the timed region and its AWS calls are not counted. The details of each part are in its module:
`scripts.bench.cold_start`, `scripts.bench.operations`, `scripts.bench.keyring` (the branch keys' cost per
encrypt and decrypt against one KMS call per object, on the operations' workspace), `scripts.bench.search`
(entry search warm and cold, with and without the snapshot, at 100 / 1,000 / 5,000 entries),
`scripts.bench.consolidation` (a consolidation run's model calls, AWS calls, time and precision),
`scripts.bench.turns`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scripts.bench.cold_start import BASELINE, handler_modules, measure_cold_imports
from scripts.bench.consolidation import SIZES as CONSOLIDATION_SIZES
from scripts.bench.consolidation import consolidation_benchmark
from scripts.bench.keyring import measure as measure_keyring
from scripts.bench.mcp import mcp_benchmark, report_rows
from scripts.bench.operations import operations_benchmark, settings_for
from scripts.bench.report import render_cold_imports, render_keyring, report_json
from scripts.bench.scenes import DOCUMENT_BYTES, sample_document
from scripts.bench.search import SIZES, search_benchmark
from scripts.bench.stats import ColdImport, median, p90, summarize_cold_imports
from scripts.bench.turns import TURN_TABLE, turn_benchmark
from scripts.localstack.resources import LocalResources, create_table, isolate_environment
from scripts.localstack.stack import LocalStack, StackConfig

OPERATIONS_TABLE = "wm-bench"


def cold_imports(runs: int) -> tuple[str, list[ColdImport]]:
    modules = [BASELINE, *handler_modules()]
    rows = summarize_cold_imports(measure_cold_imports(modules, runs), BASELINE)
    text = "\n".join(
        [
            f"Cold imports: each module imported in a fresh interpreter, {runs} timed runs each after one untimed "
            "warm-up (bytecode written), round-robin; the import alone, timed inside the interpreter",
            "",
            render_cold_imports(rows, BASELINE),
        ]
    )
    return text, rows


def run(
    iterations: int,
    warmup: int,
    turns: int,
    turn_warmup: int,
    import_runs: int,
    keyring_pairs: int = 200,
    mcp_calls: int = 50,
    search_iterations: int = 100,
    search_cold_runs: int = 3,
    search_sizes: tuple[int, ...] = SIZES,
    consolidation_sizes: tuple[int, ...] = CONSOLIDATION_SIZES,
) -> tuple[str, dict[str, Any]]:
    lines = ["workspace-memory bench", ""]
    meta: dict[str, Any] = {}
    imports: list[ColdImport] = []
    if import_runs > 0:  # first, while nothing else of the benchmark runs
        text, imports = cold_imports(import_runs)
        lines += [text, ""]
        meta["import_runs"] = import_runs
    # The stack's own table is the turns'; the operations get one of their own on the same server and key.
    # The gateway runs its handlers in this process (`threads`, the benchmark's alone): the turns count the
    # API's AWS calls on the very clients the handlers use. scripts/bench/gateway_load.py measures the
    # process model itself.
    config = StackConfig(
        table_name=TURN_TABLE, handler_environment={"POWERTOOLS_LOG_LEVEL": "WARNING"}, gateway_mode="threads"
    )
    with LocalStack(config) as stack:
        key = stack.resources()
        create_table(key.endpoint_url, OPERATIONS_TABLE)
        resources = LocalResources(key.endpoint_url, OPERATIONS_TABLE, key.kms_key_arn, key.key_store_table_name)
        content = sample_document()
        ops = operations_benchmark(resources, content, iterations, warmup)
        lines.append(ops.text)
        meta.update(ops.meta)
        keyring = None
        if keyring_pairs > 0:
            keyring = measure_keyring(settings_for(resources), ops.workspace_id, keyring_pairs, DOCUMENT_BYTES)
            lines += ["", render_keyring(keyring)]
        if search_iterations > 0 and search_sizes:
            search_text, searched = search_benchmark(
                settings_for(resources), search_iterations, search_cold_runs, search_sizes
            )
            lines += ["", search_text]
            meta["search"] = [
                {
                    "entries": r.entries,
                    "warm_p50_ms": median(r.warm_ms),
                    "warm_p90_ms": p90(r.warm_ms),
                    "cold_plain_p50_ms": median(r.cold_plain_ms),
                    "cold_plain_p90_ms": p90(r.cold_plain_ms),
                    "cold_snapshot_p50_ms": median(r.cold_snapshot_ms),
                    "cold_snapshot_p90_ms": p90(r.cold_snapshot_ms),
                    "warm_calls": r.warm_calls,
                    "cold_plain_calls": r.cold_plain_calls,
                    "cold_snapshot_calls": r.cold_snapshot_calls,
                    "index_bytes": r.index_bytes,
                    "snapshot_bytes": r.snapshot_bytes,
                    "seed_seconds": r.seed_seconds,
                }
                for r in searched
            ]
        if consolidation_sizes:
            consolidation_text, runs = consolidation_benchmark(settings_for(resources), consolidation_sizes)
            lines += ["", consolidation_text]
            meta["consolidation"] = [
                {
                    "entries": r.entries,
                    "model_calls": r.model_calls,
                    "run_ms": r.run_ms,
                    "precision": r.correct / r.proposed if r.proposed else None,
                }
                for r in runs
            ]
        turn_report = turn_benchmark(stack, content, turns, turn_warmup) if turns > 0 else None
        mcp_report = mcp_benchmark(stack, content, mcp_calls, warmup) if mcp_calls > 0 else None
    if turn_report is not None:
        lines += ["", turn_report.text]
        meta.update(turn_report.meta)
    if mcp_report is not None:
        lines += ["", mcp_report.text]
        meta["mcp_recall"] = report_rows(mcp_report)
    lines += ["", "moto latencies are not AWS latencies: compare the calls per operation and the ratios."]
    turn_rows = turn_report.summaries if turn_report is not None else []
    return "\n".join(lines), report_json(ops.summaries, ops.kms, meta, turn_rows, imports, keyring)


def _at_least(minimum: int) -> Any:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return value

    return parse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=_at_least(1), default=200, help="timed runs per operation (200)")
    parser.add_argument("--warmup", type=_at_least(0), default=5, help="untimed runs per operation first (5)")
    parser.add_argument(
        "--keyring-pairs",
        type=_at_least(0),
        default=200,
        help="warm encrypt+decrypt pairs per scheme for the keyring's cost (200; 0: none)",
    )
    parser.add_argument("--turns", type=_at_least(0), default=10, help="timed agent turns each way (10; 0: none)")
    parser.add_argument("--turn-warmup", type=_at_least(0), default=1, help="untimed turns each way first (1)")
    parser.add_argument(
        "--import-runs", type=_at_least(0), default=7, help="timed cold imports per module (7; 0: none)"
    )
    parser.add_argument(
        "--mcp-calls", type=_at_least(0), default=50, help="timed recall_memory calls over MCP, each way (50; 0: none)"
    )
    parser.add_argument(
        "--search-iterations", type=_at_least(0), default=100, help="timed warm searches per size (100; 0: none)"
    )
    parser.add_argument(
        "--search-cold-runs", type=_at_least(1), default=3, help="timed cold builds per size and way (3)"
    )
    parser.add_argument(
        "--search-sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=SIZES,
        help="workspace sizes in entries, comma-separated (100,1000,5000)",
    )
    parser.add_argument(
        "--consolidation-sizes",
        type=lambda text: tuple(int(n) for n in text.split(",") if n),
        default=CONSOLIDATION_SIZES,
        help="workspace sizes of the consolidation runs, comma-separated (100,1000; empty: none)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    isolate_environment()
    text, data = run(
        args.iterations,
        args.warmup,
        args.turns,
        args.turn_warmup,
        args.import_runs,
        args.keyring_pairs,
        args.mcp_calls,
        args.search_iterations,
        args.search_cold_runs,
        args.search_sizes,
        args.consolidation_sizes,
    )
    print(text, flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", flush=True)


if __name__ == "__main__":
    main()
