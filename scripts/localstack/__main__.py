"""`make dev`: the embedded local stack in the foreground. No AWS account, no Docker.

Starts, in order (`LocalStack.up`): the moto server (DynamoDB + KMS, serialized) with the table from
template.yaml and a KMS key; the local gateway serving the API; the Temporal dev server (SQLite state, web
UI); the codec server the UI decodes histories with; and the turn worker (`python -m workflows.worker`).
Loopback only. Ctrl-C (or SIGTERM) stops everything it started, in reverse order.

Ports: MOTO_PORT (5000), GATEWAY_PORT (3000), TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233; `off` for no
UI), CODEC_PORT (8888; `off` for no codec server: the UI then shows histories encrypted). State:
LOCAL_STATE_DIR (.local, relative to the repo root) holds temporal.db and temporal.log; the DB is reset at
start, as moto's in-memory state is (old histories were encrypted under a key that is gone).
TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE (workspace-memory-turns), MODEL_PROVIDER (scripted) and
AUTOMATION_AUTH (dev:worker: the worker sends the gateway's dev credential for the IAM routes) are passed on
to the worker.

Nothing outlives it (Linux): each child is tethered to this process (`scripts/localstack/tether.py`), so a
SIGKILL here kills them too, and this process is tethered to its own parent with SIGTERM, so when `make dev`'s
`make` (or the shell or test that started it) dies, even by SIGKILL, the stack stops in order as on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

from scripts.localstack.functions import TRACE_DISABLED
from scripts.localstack.processes import WORKER_MODULE, Interrupted, StartError, warn
from scripts.localstack.resources import isolate_environment
from scripts.localstack.signals import signals_set
from scripts.localstack.stack import LocalStack, StackConfig
from scripts.localstack.template import load_template
from scripts.localstack.tether import tether


def banner(stack: LocalStack) -> str:
    """What is where; `pid` of every child, so a developer (or a test) can find them."""
    config, resources = stack.config, stack.resources()
    pids = dict(stack.children)
    moto, temporal, worker = pids["moto server"], pids["Temporal dev server"], pids.get("worker")
    ui = stack.temporal_ui or "off (TEMPORAL_UI_PORT=off)"
    codec_proc = pids.get("codec server")
    codec = (
        "off (CODEC_PORT=off)"
        if codec_proc is None
        else f"{stack.codec_url}   (the Temporal UI decodes histories with it; CLI: temporal workflow show "
        f"--codec-endpoint {stack.codec_url} -w <id>; pid {codec_proc.pid})"
    )
    worker_line = (
        "not running" if worker is None else f"{WORKER_MODULE}   (task queue {config.task_queue}, pid {worker.pid})"
    )
    return "\n".join(
        [
            f"moto (DynamoDB + KMS)  {resources.endpoint_url}   (pid {moto.pid})",
            f"table / KMS key        {resources.table_name} / {resources.kms_key_arn}",
            f"API                    {stack.api}",
            f"Temporal               {stack.temporal()}   (namespace {config.namespace}, pid {temporal.pid})",
            f"Temporal UI            {ui}",
            f"Temporal DB            {config.temporal_db}   (log {config.temporal_log})",
            f"codec server           {codec}",
            f"worker                 {worker_line}",
            *telemetry_lines(config.function_log, load_template()),
            f"ready: curl -s {stack.api}/v1/health   (Ctrl-C stops everything)",
        ]
    )


def telemetry_lines(function_log: Path | None, template: dict[str, Any]) -> list[str]:
    """Where the functions' logs, metrics and traces go on this stack, and where they go in AWS
    (docs/operations.md)."""
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    namespace = variables.get("POWERTOOLS_METRICS_NAMESPACE", "unset")
    logs = "this terminal (stderr)" if function_log is None else str(function_log)
    return [
        f"function logs          {logs}: one JSON line per request or batch (AWS: each function's log group)",
        f"metrics                EMF JSON lines with an `_aws` key, in the same stream (AWS: CloudWatch {namespace})",
        f"traces                 off ({TRACE_DISABLED}=true: no X-Ray daemon here; AWS: X-Ray, Tracing: Active)",
        "API access logs        none here (AWS: the ApiAccessLogGroup log group, one JSON line per request)",
    ]


def watch(stack: LocalStack, stopping: threading.Event) -> None:
    """Returns once a signal arrives, saying so once meanwhile if a child dies on its own."""
    alive = dict(stack.children)
    while not stopping.wait(1.0):
        for name, proc in list(alive.items()):
            code = proc.poll()
            if code is not None:
                warn(f"{name} exited with code {code}; the rest of the stack keeps running")
                del alive[name]


def main() -> None:
    parent = os.getppid()
    isolate_environment()
    config = StackConfig.from_environ(os.environ)
    try:
        # Signals only set `stopping` (checked at safe points); the stack unwinds in reverse: worker,
        # Temporal, gateway, moto.
        stopping = threading.Event()
        with signals_set(stopping), suppress(Interrupted), LocalStack(config, cancel=stopping) as stack:
            tether(signal.SIGTERM, parent)  # once SIGTERM sets `stopping`: the parent's death is a Ctrl-C
            stack.up(worker="process")
            print(banner(stack), flush=True)
            watch(stack, stopping)
    except StartError as exc:
        raise SystemExit(str(exc)) from exc
    finally:
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
