"""`make dev`: the embedded local stack. No AWS account, no Docker.

Starts, in order: the moto server (DynamoDB + KMS, serialized) with the table from template.yaml and a KMS
key; the local gateway serving the API; the Temporal dev server (SQLite state, web UI); and the turn
worker (`python -m workflows.worker`), if that module exists. Loopback only. Ctrl-C (or SIGTERM) stops
everything it started, in reverse order.

Ports: MOTO_PORT (5000), GATEWAY_PORT (3000), TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233; `off` for no
UI). State: LOCAL_STATE_DIR (.local, relative to the repo root) holds temporal.db and temporal.log; the DB
is reset at start, as moto's in-memory state is (old histories were encrypted under a key that is gone).
TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE (workspace-memory-turns), MODEL_PROVIDER (scripted) and
AUTOMATION_AUTH (dev:worker: the worker sends the gateway's dev credential for the IAM routes) are passed on
to the worker.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from contextlib import ExitStack, suppress
from pathlib import Path
from types import FrameType
from typing import IO, Literal

from scripts.localstack.gateway import Gateway, make_server
from scripts.localstack.resources import FAKE_CREDENTIALS, provision
from scripts.localstack.template import ROOT
from scripts.localstack.temporal import TemporalStartCancelled, TemporalStartError, start_temporal, stop

HOST = "127.0.0.1"
WORKER_MODULE = "workflows.worker"
WORKER_READY = "WORKER READY"
WORKER_READY_TIMEOUT_SECONDS = 30.0
Process = subprocess.Popen[str] | subprocess.Popen[bytes]


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived while starting: unwind whatever has started so far."""


def checkpoint(stopping: threading.Event) -> None:
    if stopping.is_set():
        raise Interrupted


def warn(message: str) -> None:
    print(f"warning: {message}", flush=True)


def start_moto(port: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scripts.localstack.moto_server", "--host", HOST, "--port", str(port)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        process_group=0,  # a terminal's Ctrl-C reaches only this process, which stops the children in order
    )
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()
    except BaseException:
        stop(proc)
        raise
    if not line.startswith("READY "):
        stop(proc)
        raise SystemExit(f"moto server failed to start on {HOST}:{port} (is the port in use?)")
    return proc, f"http://{HOST}:{line.split()[1]}"


def _relay(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Echoes the worker's stdout (so its pipe never fills) and hands each line to whoever waits for it."""
    for line in stream:
        print(f"worker | {line.rstrip()}", flush=True)
        lines.put(line)
    lines.put(None)


def _await_worker(
    lines: queue.Queue[str | None], timeout: float, stopping: threading.Event
) -> Literal["ready", "exited", "timeout", "interrupted"]:
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        if stopping.is_set():
            return "interrupted"
        try:
            line = lines.get(timeout=min(remaining, 0.1))
        except queue.Empty:
            continue
        if line is None:
            return "exited"
        if line.startswith(WORKER_READY):
            return "ready"
    return "timeout"


def start_worker(
    env: dict[str, str], stopping: threading.Event, timeout: float = WORKER_READY_TIMEOUT_SECONDS
) -> subprocess.Popen[str] | None:
    """Starts the worker and waits for its `WORKER READY` line; None (with a warning) if there is none."""
    try:
        found = importlib.util.find_spec(WORKER_MODULE) is not None
    except ImportError:
        found = False
    if not found:
        warn(f"{WORKER_MODULE} does not exist yet: no worker started, so turns will not run")
        return None
    proc = subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        process_group=0,
    )
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_relay, args=(proc.stdout, lines), daemon=True).start()
    try:
        outcome = _await_worker(lines, timeout, stopping)
    except BaseException:
        stop(proc)
        raise
    if outcome == "interrupted":
        stop(proc)
        raise Interrupted
    if outcome == "ready":
        return proc
    if outcome == "exited":
        code = stop(proc)
        warn(
            f"the worker exited with code {code} before printing {WORKER_READY!r} (see its stderr above); "
            "the rest of the stack keeps running, without a worker"
        )
        return None
    warn(f"the worker printed no {WORKER_READY!r} within {timeout:.0f}s; leaving it running")
    return proc


def _state_dir() -> Path:
    path = Path(os.environ.get("LOCAL_STATE_DIR", ".local"))
    return (path if path.is_absolute() else ROOT / path).resolve()


def _ui_port() -> int | None:
    value = os.environ.get("TEMPORAL_UI_PORT", "8233").strip()
    return None if value.lower() == "off" else int(value)


def _watch(children: Iterable[tuple[str, Process]], stopping: threading.Event) -> None:
    """Returns once a signal arrives, saying so once meanwhile if a child dies on its own."""
    alive = dict(children)
    while not stopping.wait(1.0):
        for name, proc in list(alive.items()):
            code = proc.poll()
            if code is not None:
                warn(f"{name} exited with code {code}; the rest of the stack keeps running")
                del alive[name]


def run(stack: ExitStack, stopping: threading.Event) -> None:
    """Starts everything (each piece's stop pushed onto `stack`) and serves until a signal arrives."""
    moto_port = int(os.environ.get("MOTO_PORT", "5000"))
    gateway_port = int(os.environ.get("GATEWAY_PORT", "3000"))
    temporal_port = int(os.environ.get("TEMPORAL_PORT", "7233"))
    ui_port = _ui_port()
    state_dir = _state_dir()
    namespace = os.environ.setdefault("TEMPORAL_NAMESPACE", "default")
    task_queue = os.environ.setdefault("TEMPORAL_TASK_QUEUE", "workspace-memory-turns")
    # Handlers read their settings at cold start, from this process's environment.
    os.environ["TEMPORAL_ADDRESS"] = f"{HOST}:{temporal_port}"

    moto, endpoint = start_moto(moto_port)
    stack.callback(stop, moto)
    checkpoint(stopping)
    resources = provision(endpoint)
    os.environ.update(resources.environment())
    checkpoint(stopping)

    try:
        server = make_server(Gateway(), HOST, gateway_port)
    except OSError as exc:
        raise SystemExit(f"local gateway failed to start on {HOST}:{gateway_port}: {exc}") from exc
    stack.callback(server.server_close)
    stack.callback(server.shutdown)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = f"http://{HOST}:{server.server_address[1]}"

    state_dir.mkdir(parents=True, exist_ok=True)
    db_file, log_file = state_dir / "temporal.db", state_dir / "temporal.log"
    # moto's state (table, KMS key) lives in memory and is new on every start; workflow histories left by
    # an earlier run are encrypted under a key that no longer exists, so Temporal starts fresh too.
    db_file.unlink(missing_ok=True)
    try:
        temporal, address = start_temporal(
            temporal_port,
            ui_port,
            db_file,
            HOST,
            namespaces=[namespace],
            log_file=log_file,
            new_process_group=True,
            cancel=stopping,
        )
    except TemporalStartCancelled as exc:
        raise Interrupted from exc
    except TemporalStartError as exc:
        raise SystemExit(str(exc)) from exc
    stack.callback(stop, temporal)

    worker = start_worker(
        {
            **os.environ,
            **resources.environment(),
            "TEMPORAL_ADDRESS": address,
            "TEMPORAL_NAMESPACE": namespace,
            "TEMPORAL_TASK_QUEUE": task_queue,
            "AUTOMATION_BASE_URL": api,
            "AUTOMATION_AUTH": os.environ.get("AUTOMATION_AUTH", "dev:worker"),
            "MODEL_PROVIDER": os.environ.get("MODEL_PROVIDER", "scripted"),
            "PYTHONUNBUFFERED": "1",
        },
        stopping,
    )
    children: list[tuple[str, Process]] = [("moto server", moto), ("Temporal dev server", temporal)]
    if worker is not None:
        stack.callback(stop, worker)
        children.append(("worker", worker))

    ui = f"http://{HOST}:{ui_port}" if ui_port is not None else "off (TEMPORAL_UI_PORT=off)"
    worker_line = "not running" if worker is None else f"{WORKER_MODULE}   (task queue {task_queue}, pid {worker.pid})"
    print(f"moto (DynamoDB + KMS)  {endpoint}   (pid {moto.pid})", flush=True)
    print(f"table / KMS key        {resources.table_name} / {resources.kms_key_arn}", flush=True)
    print(f"API                    {api}", flush=True)
    print(f"Temporal               {address}   (namespace {namespace}, pid {temporal.pid})", flush=True)
    print(f"Temporal UI            {ui}", flush=True)
    print(f"Temporal DB            {db_file}   (log {log_file})", flush=True)
    print(f"worker                 {worker_line}", flush=True)
    print(f"ready: curl -s {api}/v1/health   (Ctrl-C stops everything)", flush=True)
    _watch(children, stopping)


def main() -> None:
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    stopping = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        # Never raises: an exception thrown into arbitrary code (say, inside subprocess's waitpid lock)
        # can wedge the very cleanup it triggers. Startup checks the event at safe points instead.
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        # The stack unwinds in reverse: worker, Temporal, gateway, moto.
        with ExitStack() as stack, suppress(Interrupted):
            run(stack, stopping)
    finally:
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
