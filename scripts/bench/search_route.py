"""The search route's overhead: one workspace's warm search in-process and through the local gateway, measured
side by side in one run.

    .venv/bin/python -m scripts.bench.search_route [--entries 1000] [--iterations 100] [--json PATH]

The gateway runs each request in a Lambda-like environment of its own (processes mode), from the built artifact
(`make build` first). The entries are written in-process to the stack's own table, so seeding costs no HTTP.
Each timed round asks the same query of both, one after the other, and checks both answered the same entry ids
(the two measure one search, not two). The route's overhead is the difference of the two medians: routing,
dev-auth, the handler's parse, its membership read and the JSON answer. No test asserts any of these times.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
import uuid
from pathlib import Path

import requests

from scripts.bench.gateway_load import stack_config
from scripts.bench.search import QUERIES, draft
from scripts.bench.stats import median, percentile
from scripts.localstack.resources import isolate_environment
from scripts.localstack.stack import LocalStack
from workspace_memory.bootstrap import build_services


def measure(stack: LocalStack, entries: int, iterations: int) -> dict[str, object]:
    api = stack.gateway() and stack.api
    user = f"bench-route-{uuid.uuid4().hex[:8]}"
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer dev:{user}"
    made = session.post(f"{api}/v1/workspaces", json={"name": "route", "shareType": "private"}, timeout=60)
    made.raise_for_status()
    ws = made.json()["workspaceId"]
    services = build_services(stack.settings())
    for n in range(entries):
        services.entries.create(user, ws, draft(n))
    url = f"{api}/v1/workspaces/{ws}/search"
    queries = itertools.cycle(QUERIES)
    for query in QUERIES:  # both warm: the environment's index built, this process's too
        session.get(url, params={"q": query, "k": "5"}, timeout=120).raise_for_status()
        services.search.search(user, ws, query, 5)
    routed: list[float] = []
    local: list[float] = []
    for _ in range(iterations):
        query = next(queries)
        start = time.perf_counter()
        answer = session.get(url, params={"q": query, "k": "5"}, timeout=60)
        routed.append((time.perf_counter() - start) * 1000)
        answer.raise_for_status()
        start = time.perf_counter()
        hits = services.search.search(user, ws, query, 5)
        local.append((time.perf_counter() - start) * 1000)
        over_http = [hit["entryId"] for hit in answer.json()["results"]]
        if over_http != [hit.entry_id for hit in hits.results]:
            raise SystemExit(f"the route and the service disagree on {query!r}: not one search measured twice")
    return {
        "entries": entries,
        "iterations": iterations,
        "route_p50_ms": median(routed),
        "route_p90_ms": percentile(routed, 90),
        "in_process_p50_ms": median(local),
        "in_process_p90_ms": percentile(local, 90),
        "overhead_p50_ms": median(routed) - median(local),
    }


def render(result: dict[str, object]) -> str:
    r = result
    return (
        f"search route vs in-process, warm, {r['entries']:,} entries, {r['iterations']} rounds (one run):\n"
        f"  through the gateway: p50 {r['route_p50_ms']:.1f} ms, p90 {r['route_p90_ms']:.1f} ms\n"
        f"  in-process:          p50 {r['in_process_p50_ms']:.1f} ms, p90 {r['in_process_p90_ms']:.1f} ms\n"
        f"  the route's overhead: {r['overhead_p50_ms']:.1f} ms at the median"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1000, help="entries in the workspace (1000)")
    parser.add_argument("--iterations", type=int, default=100, help="timed rounds (100)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the result as JSON")
    args = parser.parse_args(argv)
    isolate_environment()
    with (
        tempfile.TemporaryDirectory(prefix="wm-route-") as tmp,
        LocalStack(stack_config("processes", Path(tmp) / "f.log")) as stack,
    ):
        result = measure(stack, args.entries, args.iterations)
    print(render(result), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
