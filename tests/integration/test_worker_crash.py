"""A worker killed mid-turn, after its capture committed but before the activity reported back: a new
worker finishes the turn once, and the retried capture replays its receipt - one version, not two."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import urllib3

from scripts.localstack.resources import LocalResources
from tests.integration.fence_support import DOC, make_scene
from tests.integration.turn_support import result, running_worker, start_queued, worker_settings
from workspace_memory.settings import Settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LINE = "- remembered exactly once"


@contextmanager
def holding_proxy(upstream: str, committed: threading.Event, release: threading.Event) -> Iterator[str]:
    """Forwards to the gateway; a capture's response is held back (after the capture committed upstream)
    until `release`, so the worker can be killed at exactly that point."""
    http = urllib3.PoolManager()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            upstream_response = http.request(self.command, upstream + self.path, body=body or None, headers=headers)
            if self.command == "PUT" and "/v1/automation/workspaces/" in self.path and not release.is_set():
                committed.set()
                release.wait(timeout=120)
            try:
                self.send_response(upstream_response.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(upstream_response.data)))
                self.end_headers()
                self.wfile.write(upstream_response.data)
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
    proc = subprocess.Popen(
        [sys.executable, "-m", "workflows.worker"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the worker polls (or dies)
    assert line.strip() == "WORKER READY", line
    return proc


def test_worker_killed_after_capture_commits_finishes_once(
    settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    scene = make_scene(settings)
    queue = f"q-crash-{uuid.uuid4().hex[:8]}"
    committed, release = threading.Event(), threading.Event()
    _, turn_id = start_queued(scene, settings, queue, f"remember: {LINE}\nWhat do you remember?")
    with holding_proxy(gateway_url, committed, release) as proxy:
        doomed = start_worker_process(resources, settings, proxy, queue)
        try:
            assert committed.wait(timeout=120), "the capture never reached the gateway"
            assert scene.head() == (2, DOC + LINE + "\n")  # committed upstream; the worker hasn't heard
        finally:
            doomed.kill()
            doomed.wait(timeout=30)
        release.set()
        survivor = worker_settings(settings, proxy, queue)
        with running_worker(survivor):
            view = result(survivor, scene, turn_id)

    assert view.status == "completed"
    assert [(o.tool, o.outcome, o.version) for o in view.tool_outcomes] == [("remember_in_memory", "committed", 2)]
    assert view.answer is not None
    assert LINE in view.answer
    history = scene.svc.document.history(scene.owner, scene.ws, 10, None).versions
    assert [v.op for v in history] == ["capture", "save"]  # one capture, not two
    assert scene.head() == (2, DOC + LINE + "\n")
