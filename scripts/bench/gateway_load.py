"""The local gateway's figures: cold starts per function, and an 8- and a 24-client load.

    .venv/bin/python -m scripts.bench.gateway_load [--mode processes|threads] [--requests 40] [--cold-runs 3]
                                                   [--clients 8,24] [--json PATH]

Cold starts (process model only): each function of the template on one of its events (events/), in a fresh
execution environment from the built artifact, `--cold-runs` times: spawn to ready (the interpreter and the
handler's import) and spawn to the first answer (plus the services the first request builds).

Load: each client is a user with a workspace of its own, on a keep-alive connection, alternating GET and PUT
of its memory document (PUT on the version it last saw, so never a conflict), `--requests` each; untimed
rounds at the same concurrency first, until one starts no new environment, so the timed round meets warm
ones. Requests per second over the timed round's wall time, p50/p99 of every request's latency, and errors:
any answer but 200, or a GET answered with another user's document.

Written against `LocalStack` only, so the same file measures an older checkout's gateway (the in-process
threads of commit 957382b) when copied into a worktree of it. No test asserts any of these times.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from scripts.bench.stats import median, percentile
from scripts.localstack.resources import isolate_environment
from scripts.localstack.stack import LocalStack, StackConfig
from scripts.localstack.template import ROOT, load_template, routes

QUIET = {"POWERTOOLS_LOG_LEVEL": "WARNING"}


@dataclasses.dataclass(frozen=True)
class Load:
    clients: int
    requests: int
    wall_seconds: float
    latencies_ms: list[float]
    errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.wall_seconds


def stack_config(mode: str, log: Path) -> StackConfig:
    """Quiet handlers; the gateway's mode and function log where this checkout's StackConfig has them."""
    names = {f.name for f in dataclasses.fields(StackConfig)}
    extra: dict[str, Any] = {"gateway_mode": mode, "function_log": log} if "gateway_mode" in names else {}
    return StackConfig(table_name=f"wm-load-{uuid.uuid4().hex[:6]}", handler_environment=QUIET, **extra)


class Client:
    """One user: a workspace of its own with a first version, and a keep-alive session."""

    def __init__(self, api: str) -> None:
        self.user = f"load-{uuid.uuid4().hex[:8]}"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer dev:{self.user}"
        made = self.session.post(f"{api}/v1/workspaces", json={"name": "load", "shareType": "private"}, timeout=60)
        made.raise_for_status()
        self.memory = f"{api}/v1/workspaces/{made.json()['workspaceId']}/memory"
        self.version = 0
        self._save(0)

    def _save(self, n: int) -> requests.Response:
        body = {"content": f"# Load\n- line {n} of {self.user}\n"}
        answer = self.session.put(self.memory, json=body, headers={"X-Base-Version": str(self.version)}, timeout=60)
        if answer.status_code == 200:
            self.version = int(answer.json()["version"])
        return answer

    def run(self, count: int) -> tuple[list[float], int]:
        """`count` requests, GET and PUT alternating: their latencies (ms), and how many did not answer 200
        or answered with another user's document."""
        latencies, errors = [], 0
        for n in range(count):
            start = time.perf_counter()
            answer = self._save(n) if n % 2 else self.session.get(self.memory, timeout=60)
            latencies.append((time.perf_counter() - start) * 1000)
            errors += answer.status_code != 200 or (not n % 2 and answer.json()["updatedBy"] != self.user)
        return latencies, errors


WARMUP_ROUNDS = 5


def measure_load(stack: LocalStack, clients: int, count: int) -> Load:
    """Untimed rounds first until one starts no new environment (at most WARMUP_ROUNDS; one where the
    checkout's gateway reports no cold starts), then the timed round."""
    users = [Client(stack.api) for _ in range(clients)]
    started = getattr(stack, "cold_starts", list)
    with ThreadPoolExecutor(max_workers=clients) as pool:
        for _ in range(WARMUP_ROUNDS):
            before = len(started())
            list(pool.map(lambda c: c.run(count), users))
            if len(started()) == before:
                break
        start = time.perf_counter()
        results = list(pool.map(lambda c: c.run(count), users))
        wall = time.perf_counter() - start
    latencies = [ms for run, _ in results for ms in run]
    return Load(clients, len(latencies), wall, latencies, sum(errors for _, errors in results))


def function_events() -> dict[str, Path]:
    """One event file per function of the template: the first (by name) its routes or its stream take."""
    template = load_template()
    by_route = {route.route_key: route.function for route in routes(template)}
    found: dict[str, Path] = {}
    for path in sorted((ROOT / "events").glob("*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        function = by_route.get(event.get("routeKey", "")) or ("ChangeFeedFunction" if "Records" in event else None)
        if function is not None:
            found.setdefault(function, path)
    return found


def measure_cold_starts(environment: dict[str, str], runs: int) -> dict[str, list[tuple[float, float]]]:
    """Per function: (init ms, first answer ms) of `runs` fresh environments."""
    from scripts.localstack.environments import ColdStart, Launcher
    from scripts.localstack.functions import function_specs
    from scripts.localstack.gateway import built_artifact
    from scripts.localstack.pool import context_for

    specs = function_specs(load_template(), built_artifact())
    seen: list[ColdStart] = []
    launcher = Launcher(specs, environment, on_cold_start=seen.append)
    samples: dict[str, list[tuple[float, float]]] = {}
    try:
        for _ in range(runs):  # round-robin, so a busy machine's drift falls on every function alike
            for function, path in function_events().items():
                environment_process = launcher(specs[function])
                event = json.loads(path.read_text(encoding="utf-8"))
                environment_process.invoke(event, context_for(specs[function], "cold"), specs[function].timeout)
                environment_process.close()
                cold = seen.pop()
                samples.setdefault(function, []).append((cold.init_ms, cold.first_response_ms))
    finally:
        launcher.close()
    return samples


@contextmanager
def local_stack(mode: str) -> Iterator[LocalStack]:
    with (
        tempfile.TemporaryDirectory(prefix="wm-load-") as tmp,
        LocalStack(stack_config(mode, Path(tmp) / "f.log")) as s,
    ):
        yield s


def report(
    mode: str, cold: dict[str, list[tuple[float, float]]], loads: list[Load], environments: Mapping[str, int]
) -> str:
    lines = [f"gateway: {mode}", ""]
    if cold:
        lines += ["cold start (fresh environment, median of runs)   init ms   first answer ms"]
        for function, runs in sorted(cold.items()):
            init, first = median([r[0] for r in runs]), median([r[1] for r in runs])
            lines.append(f"  {function:<44} {init:8.0f}   {first:15.0f}")
        lines.append("")
    lines.append("load (GET + PUT memory)   clients   requests   req/s    p50 ms   p99 ms   errors")
    for load in loads:
        p50, p99 = percentile(load.latencies_ms, 50), percentile(load.latencies_ms, 99)
        lines.append(
            f"  {'':<24}{load.clients:7d} {load.requests:10d} {load.rps:7.1f} {p50:9.1f} {p99:8.1f} {load.errors:8d}"
        )
    if environments:
        started = ", ".join(f"{name} {count}" for name, count in sorted(environments.items()))
        lines += ["", f"environments the stack started: {started}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", default="processes", choices=["processes", "threads"])
    parser.add_argument("--requests", type=int, default=40, help="timed requests per client (40)")
    parser.add_argument("--cold-runs", type=int, default=3, help="fresh environments per function (3; 0: none)")
    parser.add_argument("--clients", default="8,24", help="client counts, comma-separated (8,24)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    isolate_environment()
    with local_stack(args.mode) as stack:
        stack.gateway()
        process_model = hasattr(stack, "cold_starts") and args.mode == "processes"
        cold = measure_cold_starts(stack.environment(), args.cold_runs) if process_model and args.cold_runs else {}
        loads = [measure_load(stack, int(n), args.requests) for n in args.clients.split(",")]
        environments = Counter(c.function for c in getattr(stack, "cold_starts", list)())
    print(report(args.mode, cold, loads, environments), flush=True)
    if args.json is not None:
        data = {
            "mode": args.mode,
            "cold_starts": cold,
            "loads": [{**dataclasses.asdict(load), "rps": load.rps} for load in loads],
            "environments": environments,
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
