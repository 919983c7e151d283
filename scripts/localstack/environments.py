"""Execution environments: a function's process (`ProcessEnvironment`, running scripts/localstack/runtime.py
on the template's runtime, isolated from the project's venv) and what an invocation of one comes to.

An environment serves one invocation at a time (the pool sees to it). An invocation past the function's
timeout gets the process killed; a process that dies, answers out of protocol or fails to start is gone too:
the pool replaces it. Processes are forked from one long-lived thread (`Spawner`): the kernel's
parent-death signal fires when the *thread* that forked exits, and the gateway's request threads are short.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from scripts.localstack import runtime
from scripts.localstack.functions import FunctionSpec, declared_names, time_scale
from scripts.localstack.runtime import FrameReader, FrameTimeout, LambdaContext, ProtocolError

RUNNER = Path(runtime.__file__).resolve()
INIT_TIMEOUT_SECONDS = 30.0
"""Lambda allows 10 s of init (then retries it inside the first invocation); two shared cores starting
several environments at once need more, so the local stack allows 30."""
STOP_GRACE_SECONDS = 2.0

T = TypeVar("T")
Kind = Literal["result", "error", "timeout", "crash", "init_error"]


@dataclass(frozen=True)
class Invocation:
    """What one invocation came to: the handler's `payload` (kind `result`), or why there is none."""

    kind: Kind
    payload: Any = None
    error_type: str = ""


@dataclass(frozen=True)
class ColdStart:
    function: str
    pid: int | None
    init_ms: float
    """Spawn to ready: the interpreter, the handler module's import."""
    first_response_ms: float
    """Spawn to the first invocation's answer: what the first caller waited for beyond a warm request."""


class Environment(Protocol):
    """One execution environment of a function (a process, or a handler in this process for the bench)."""

    def invoke(self, event: dict[str, Any], context: LambdaContext, timeout: float) -> Invocation: ...

    def alive(self) -> bool: ...

    def close(self) -> None: ...


class InitError(RuntimeError):
    """The environment did not come up: its handler failed to import, or it never said it was ready."""


class Spawner:
    """Runs process starts on one thread that lives as long as the gateway (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="environment-spawner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:  # until close()
            start, future = job
            try:
                future.set_result(start())
            except BaseException as exc:
                future.set_exception(exc)

    def run(self, start: Callable[[], T]) -> T:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise InitError("the gateway is stopping")
            self._jobs.put((start, future))
        return future.result()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._jobs.put(None)  # after every start already asked for
        self._thread.join()


class ProcessEnvironment:
    """A function's execution environment as a child process speaking runtime.py's protocol."""

    def __init__(
        self,
        spec: FunctionSpec,
        env: Mapping[str, str],
        *,
        interpreter: str,
        spawner: Spawner,
        log: int | None = None,
        pycache: Path | None = None,
        on_cold_start: Callable[[ColdStart], None] | None = None,
    ) -> None:
        """Starts the process and waits for its `ready` (raises `InitError` if it fails). `log` is the file
        descriptor its stdout and stderr go to (None: this process's stderr)."""
        self.spec = spec
        self._on_cold_start = on_cold_start
        self._spawned = time.monotonic()
        command = [interpreter, "-I", "-S", "-u"]
        if pycache is not None:  # bytecode beside the artifact, never inside it
            command += ["-X", f"pycache_prefix={pycache}"]
        command += [str(RUNNER), str(spec.code_dir), str(spec.layer_dir), spec.handler, str(os.getpid())]
        try:
            self._proc = spawner.run(
                lambda: subprocess.Popen(
                    command,
                    cwd=spec.code_dir,
                    env=dict(env),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                )
            )
        except OSError as exc:  # no interpreter, no code directory
            raise InitError(f"{spec.logical_id}: cannot start its environment ({exc})") from exc
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self.pid = self._proc.pid
        self._requests = self._proc.stdin.fileno()
        self._answers = FrameReader(self._proc.stdout.fileno())
        self._init_ms: float | None = None
        try:
            ready = self._answers.read(time.monotonic() + INIT_TIMEOUT_SECONDS * time_scale())
        except (FrameTimeout, ProtocolError, OSError) as exc:
            self.kill()
            raise InitError(f"{spec.logical_id}: no ready answer ({type(exc).__name__})") from exc
        if ready is None or ready.get("type") != "ready":
            self.kill()
            kind = "exited" if ready is None else str(ready.get("errorType"))
            raise InitError(f"{spec.logical_id}: the handler did not load ({kind}; its traceback is in the log)")
        self._init_ms = (time.monotonic() - self._spawned) * 1000

    def alive(self) -> bool:
        return self._proc.poll() is None

    def invoke(self, event: dict[str, Any], context: LambdaContext, timeout: float) -> Invocation:
        deadline = time.monotonic() + timeout
        try:
            runtime.write_frame(self._requests, runtime.encode({"event": event, "context": context.wire()}))
            answer = self._answers.read(deadline)
        except FrameTimeout:
            self.kill()
            return Invocation("timeout")
        except (ProtocolError, OSError):
            self.kill()
            return Invocation("crash")
        if answer is None or answer.get("type") not in ("result", "error"):
            self.kill()
            return Invocation("crash")
        self._report_cold_start()
        if answer["type"] == "error":
            return Invocation("error", error_type=str(answer.get("errorType", "")))
        return Invocation("result", answer.get("payload"))

    def _report_cold_start(self) -> None:
        if self._init_ms is None or self._on_cold_start is None:
            return
        first = (time.monotonic() - self._spawned) * 1000
        self._on_cold_start(ColdStart(self.spec.logical_id, self.pid, self._init_ms, first))
        self._init_ms = None

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._close_pipes()

    def close(self) -> None:
        """EOF on its request pipe (it exits by itself), a short grace, then SIGKILL."""
        self._close_pipes()
        try:
            self._proc.wait(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close_pipes(self) -> None:
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def interpreter_for(runtime_name: str) -> str:
    """The template's runtime on this machine (python3.13: scripts/python313, as the build finds it)."""
    if runtime_name != "python3.13":
        raise InitError(f"no local interpreter for the runtime {runtime_name!r}")
    from scripts.artifact.build import BuildError, python313

    try:
        return python313()
    except BuildError as exc:
        raise InitError(str(exc)) from exc


class Launcher:
    """Starts a process environment of any of a build's functions, each with the environment Lambda would give
    it on this local stack (`FunctionSpec.environment`), its output to `log`."""

    def __init__(
        self,
        specs: Mapping[str, FunctionSpec],
        stack_environment: Mapping[str, str],
        *,
        log: int | None = None,
        on_cold_start: Callable[[ColdStart], None] | None = None,
    ) -> None:
        self._declared = declared_names(specs)
        self._stack = dict(stack_environment)
        self._log = log
        self._on_cold_start = on_cold_start
        self._interpreters: dict[str, str] = {}
        self._spawner = Spawner()

    def __call__(self, spec: FunctionSpec) -> ProcessEnvironment:
        if spec.runtime not in self._interpreters:
            self._interpreters[spec.runtime] = interpreter_for(spec.runtime)
        return ProcessEnvironment(
            spec,
            spec.environment(self._stack, self._declared),
            interpreter=self._interpreters[spec.runtime],
            spawner=self._spawner,
            log=self._log,
            pycache=spec.code_dir.parent.parent / "pycache",
            on_cold_start=self._on_cold_start,
        )

    def close(self) -> None:
        self._spawner.close()
