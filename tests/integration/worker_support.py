"""A turn worker in its own process (so a test can kill it), and a proxy in front of the gateway that holds
back one chosen answer after the request was served upstream: the worker dies having done work it never
heard of (the crash tests of turns and of workspace deletion)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import urllib3

from scripts.localstack.resources import LocalResources
from scripts.localstack.tether import tethered
from workspace_memory.kernel.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def holding_proxy(
    upstream: str, hold: Callable[[str, str], bool], held: threading.Event, release: threading.Event
) -> Iterator[str]:
    """Forwards every request to `upstream`; when `hold(method, path)` is true for one, its upstream answer
    is kept back (after `held` is set) until `release`."""
    http = urllib3.PoolManager()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            answer = http.request(self.command, upstream + self.path, body=body or None, headers=headers)
            with lock:
                holding = not release.is_set() and hold(self.command, self.path)
            if holding:
                held.set()
                release.wait(timeout=120)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.data)))
                self.end_headers()
                self.wfile.write(answer.data)
            except OSError:
                pass  # the worker that asked is dead

        do_GET = do_PUT = do_POST = do_DELETE = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def start_worker_process(
    resources: LocalResources, settings: Settings, base_url: str, queue: str
) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        **resources.environment(),
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": queue,
        "AUTOMATION_BASE_URL": base_url,
        "AUTOMATION_AUTH": "dev:doomed-worker",
        "MODEL_PROVIDER": "scripted",
    }
    proc = subprocess.Popen(  # tethered: a test process that dies takes it along
        tethered([sys.executable, "-m", "workflows.worker"]), cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the worker polls (or dies)
    assert line.strip() == "WORKER READY", line
    return proc


def nth_call(path_suffix: str, n: int) -> Callable[[str, str], bool]:
    """A `hold` for `holding_proxy`: the `n`th request whose path ends with `path_suffix`."""
    calls = iter(range(1, 1_000_000))
    return lambda method, path: path.endswith(path_suffix) and next(calls) == n


@contextmanager
def worker_killed_at(
    resources: LocalResources, settings: Settings, gateway_url: str, queue: str, hold: Callable[[str, str], bool]
) -> Iterator[None]:
    """A worker process on `queue` behind a proxy that keeps back the answer `hold` picks: the body runs once
    that request was served upstream and its answer is held; then the worker is killed, and the answer goes
    to nobody. The work it did is done; the worker never heard of it."""
    held, release = threading.Event(), threading.Event()
    with holding_proxy(gateway_url, hold, held, release) as proxy:
        doomed = start_worker_process(resources, settings, proxy, queue)
        try:
            assert held.wait(timeout=120), "the chosen request never reached the gateway"
            yield
        finally:
            doomed.kill()
            doomed.wait(timeout=30)
        release.set()
