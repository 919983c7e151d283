"""The local stack's child processes: the moto server, the codec server and the turn worker, started and
stopped in order.

Each start waits for the child's own readiness line (`READY <port>`, `WORKER READY`), never a sleep. With
`new_process_group`, a terminal's Ctrl-C reaches only the caller, which then stops its children in order.
Every child is `tethered`: if the caller dies without stopping them (SIGKILL), the kernel kills them too.
"""

from __future__ import annotations

import importlib.util
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, Literal

from scripts.localstack.template import ROOT
from scripts.localstack.tether import tethered

HOST = "127.0.0.1"
WORKER_MODULE = "workflows.worker"
WORKER_READY = "WORKER READY"
WORKER_READY_TIMEOUT_SECONDS = 30.0
Process = subprocess.Popen[str] | subprocess.Popen[bytes]


class StartError(RuntimeError):
    """A piece of the stack did not come up: the message says which, where and why."""


class Interrupted(Exception):
    """The caller's cancel event (SIGINT or SIGTERM, say) was set while starting: unwind what has started."""


def warn(message: str) -> None:
    print(f"warning: {message}", flush=True)


def stop(proc: Process, timeout: float = 10.0) -> int:
    """SIGTERM, up to `timeout` seconds of grace, then SIGKILL. Returns the exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def start_moto(host: str = HOST, port: int = 0, *, new_process_group: bool = False) -> tuple[Process, str]:
    """`python -m scripts.localstack.moto_server`, once it listens; returns (process, endpoint URL).
    Port 0 lets the server pick a free one."""
    argv = ["-m", "scripts.localstack.moto_server", "--host", host, "--port", str(port)]
    proc, line = _start_ready(argv, None, new_process_group)
    if not line.startswith("READY "):
        stop(proc)
        raise StartError(f"moto server failed to start on {host}:{port} (is the port in use?)")
    return proc, f"http://{host}:{int(line.split()[1])}"


def start_codec(
    env: Mapping[str, str], port: int, ui_origins: list[str], host: str = HOST, *, new_process_group: bool = False
) -> tuple[Process, str]:
    """`python -m workflows.codec_server` with the stack's environment (its table, key, fake credentials), once
    it listens; returns (process, URL). Its errors (the port in use, say) go to this process's stderr."""
    argv = ["-m", "workflows.codec_server", "--host", host, "--port", str(port)]
    argv += [arg for origin in ui_origins for arg in ("--ui-origin", origin)]
    proc, line = _start_ready(argv, env, new_process_group, stderr=None)
    if not line.startswith("READY "):
        stop(proc)
        raise StartError(f"codec server failed to start on {host}:{port} (see above; CODEC_PORT=off for none)")
    return proc, f"http://{host}:{int(line.split()[1])}"


def _start_ready(
    argv: list[str], env: Mapping[str, str] | None, new_process_group: bool, stderr: int | None = subprocess.DEVNULL
) -> tuple[Process, str]:
    """A Python child that prints `READY <port>` once it listens: the process and the first line it printed
    that says so (or the last one, or nothing, if it died first)."""
    proc = subprocess.Popen(
        tethered([sys.executable, *argv]),
        cwd=ROOT,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        process_group=0 if new_process_group else None,
    )
    assert proc.stdout is not None
    line = ""
    try:
        for line in proc.stdout:  # blocks until the server is listening (or has died)
            if line.startswith("READY "):
                break
    except BaseException:
        stop(proc)
        raise
    return proc, line


def _relay(stream: IO[str], lines: queue.Queue[str | None], echo: Callable[[str], None]) -> None:
    """Echoes the worker's stdout (so its pipe never fills) and hands each line to whoever waits for it."""
    for line in stream:
        echo(line)
        lines.put(line)
    lines.put(None)


def echo_worker_line(line: str) -> None:
    print(f"worker | {line.rstrip()}", flush=True)


def _await_worker(
    lines: queue.Queue[str | None], timeout: float, cancel: threading.Event | None
) -> Literal["ready", "exited", "timeout", "interrupted"]:
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        if cancel is not None and cancel.is_set():
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
    env: Mapping[str, str],
    *,
    cancel: threading.Event | None = None,
    echo: Callable[[str], None] = echo_worker_line,
    new_process_group: bool = False,
    timeout: float = WORKER_READY_TIMEOUT_SECONDS,
) -> subprocess.Popen[str] | None:
    """`python -m workflows.worker` with `env`, once it prints `WORKER READY`; None (with a warning) if it
    exits first or does not exist. Every line it prints goes to `echo`."""
    try:
        found = importlib.util.find_spec(WORKER_MODULE) is not None
    except ImportError:
        found = False
    if not found:
        warn(f"{WORKER_MODULE} does not exist yet: no worker started, so turns will not run")
        return None
    proc = subprocess.Popen(
        tethered([sys.executable, "-m", WORKER_MODULE]),
        cwd=ROOT,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        process_group=0 if new_process_group else None,
    )
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_relay, args=(proc.stdout, lines, echo), daemon=True).start()
    try:
        outcome = _await_worker(lines, timeout, cancel)
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
