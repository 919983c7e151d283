"""Execution environments as the local stack runs them, on a probe function of this test's own: each is a
process of the template's runtime, isolated from the project's venv, one request at a time; a handler past its
timeout is killed, a crash is replaced, and no environment outlives the process that started it.

Holding an invocation open is done with a FIFO: the handler opens it for reading, so the test's open for
writing returns exactly when the handler is inside its invocation (no sleep, no polling).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from scripts.localstack import pool as pool_module
from scripts.localstack.environments import Invocation, Launcher
from scripts.localstack.functions import FunctionSpec
from scripts.localstack.pool import Environments
from scripts.localstack.template import ROOT

pytestmark = pytest.mark.integration

WAIT_SECONDS = 60.0
PROBE = """
import importlib.util, os, sys, time

def handler(event, context):
    action = event.get("action")
    if action == "hold":
        with open(event["fifo"]) as held:
            held.read()
    elif action == "sleep":
        time.sleep(3600)
    elif action == "exit":
        os._exit(3)
    elif action == "raise":
        raise RuntimeError("boom")
    elif action == "print":
        print("printed on stdout")
        print("printed on stderr", file=sys.stderr)
    return {
        "pid": os.getpid(),
        "path": sys.path,
        "flags": [sys.flags.isolated, sys.flags.no_site],
        "pytest": importlib.util.find_spec("pytest") is not None,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "remaining": context.get_remaining_time_in_millis(),
        "function": context.function_name,
    }
"""


@pytest.fixture
def probe(tmp_path: Path) -> FunctionSpec:
    code, layer = tmp_path / "ProbeFunction", tmp_path / "layer"
    code.mkdir()
    layer.mkdir()
    (code / "app.py").write_text(PROBE, encoding="utf-8")
    return FunctionSpec(
        logical_id="ProbeFunction",
        handler="app.handler",
        runtime="python3.13",
        timeout=30.0,
        memory_mb=128,
        code_dir=code,
        layer_dir=layer,
        variables={"DECLARED": "literal", "RESOLVED": None},
    )


@pytest.fixture
def log(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    path = tmp_path / "functions.log"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        yield path, fd
    finally:
        os.close(fd)


@contextmanager
def environments(spec: FunctionSpec, log: int | None = None) -> Iterator[Environments]:
    launcher = Launcher({spec.logical_id: spec}, {"RESOLVED": "stack", "ANYWHERE": "x"}, log=log)
    pools = Environments({spec.logical_id: spec}, launcher, cap=2)
    try:
        yield pools
    finally:
        pools.close()
        launcher.close()


@pytest.fixture
def pool(probe: FunctionSpec, log: tuple[Path, int]) -> Iterator[Environments]:
    with environments(probe, log[1]) as pools:
        yield pools


def call(pool: Environments, **event: Any) -> Invocation:
    return pool.invoke("ProbeFunction", event)


def pid_of(invocation: Invocation) -> int:
    assert invocation.kind == "result", invocation
    pid: int = invocation.payload["pid"]
    return pid


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Hold:
    """Opens a FIFO for writing in a thread: `wait` returns exactly when a handler has opened it for reading
    (it is inside its invocation), `release` closes it (EOF: the handler's read returns)."""

    def __init__(self, fifo: Path) -> None:
        os.mkfifo(fifo)
        self._writer: Future[int] = Future()
        threading.Thread(target=lambda: self._writer.set_result(os.open(fifo, os.O_WRONLY)), daemon=True).start()

    def wait(self) -> None:
        self._writer.result(timeout=WAIT_SECONDS)

    def release(self) -> None:
        os.close(self._writer.result(timeout=WAIT_SECONDS))


def test_an_environment_is_an_isolated_process_of_the_runtime(
    pool: Environments, probe: FunctionSpec, log: tuple[Path, int]
) -> None:
    answer = call(pool, action="print")
    body = answer.payload
    assert body["pid"] != os.getpid()
    assert body["path"][:2] == [str(probe.code_dir), str(probe.layer_dir)]  # /var/task, /opt/python
    assert not [p for p in body["path"][2:] if ".venv" in p or "site-packages" in p]  # the stdlib only
    assert body["flags"] == [1, 1]
    assert body["pytest"] is False
    assert body["cwd"] == str(probe.code_dir)
    assert 0 < body["remaining"] <= 30_000
    assert body["function"] == "ProbeFunction"
    env = body["env"]
    assert (env["DECLARED"], env["RESOLVED"], env["ANYWHERE"]) == ("literal", "stack", "x")
    assert env["AWS_LAMBDA_FUNCTION_NAME"] == "ProbeFunction"
    assert not {"VIRTUAL_ENV", "PYTHONPATH", "HOME"} & set(env)
    text = log[0].read_text()
    assert "printed on stdout" in text  # the handler's output went to the log, not into the protocol
    assert "printed on stderr" in text


def test_one_request_at_a_time_a_new_environment_when_all_are_busy(pool: Environments, tmp_path: Path) -> None:
    first, second = Hold(tmp_path / "first"), Hold(tmp_path / "second")
    with ThreadPoolExecutor(max_workers=2) as threads:
        one = threads.submit(call, pool, action="hold", fifo=str(tmp_path / "first"))
        first.wait()  # the first environment is busy until released
        two = threads.submit(call, pool, action="hold", fifo=str(tmp_path / "second"))
        second.wait()
        first.release()
        second.release()
        pids = {pid_of(one.result(timeout=WAIT_SECONDS)), pid_of(two.result(timeout=WAIT_SECONDS))}
    assert len(pids) == 2
    assert pid_of(call(pool)) in pids  # an idle one is reused
    assert pool.pools["ProbeFunction"].size() == 2


def test_a_handler_past_its_timeout_is_killed_and_the_next_request_gets_a_new_environment(
    probe: FunctionSpec,
) -> None:
    with environments(replace(probe, timeout=2.0)) as pool:
        before = pid_of(call(pool))
        assert call(pool, action="sleep").kind == "timeout"
        assert gone(before)
        assert pid_of(call(pool)) != before


def test_a_crashed_environment_is_replaced_an_error_keeps_it(pool: Environments) -> None:
    before = pid_of(call(pool))
    failed = call(pool, action="raise")
    assert (failed.kind, failed.error_type) == ("error", "RuntimeError")
    assert pid_of(call(pool)) == before  # an unhandled error is an answer: the environment lives on
    assert call(pool, action="exit").kind == "crash"
    assert gone(before)
    assert pid_of(call(pool)) != before


def test_an_idle_environment_is_stopped_when_its_function_is_next_called(
    pool: Environments, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = pid_of(call(pool))
    monkeypatch.setattr(pool_module, "IDLE_SECONDS", 0.0)  # every idle one is past it now
    watch = os.pidfd_open(before)
    try:
        assert pid_of(call(pool)) != before
        assert select.select([watch], [], [], WAIT_SECONDS)[0], f"idle environment {before} was not stopped"
    finally:
        os.close(watch)


def test_a_handler_that_does_not_load_is_an_init_error(probe: FunctionSpec) -> None:
    with environments(replace(probe, handler="missing.handler")) as pool:
        assert call(pool).kind == "init_error"


HELPER = """
import json, sys
from pathlib import Path
from scripts.localstack.environments import Launcher
from scripts.localstack.functions import FunctionSpec
from scripts.localstack.pool import context_for

data = json.loads(sys.argv[1])
spec = FunctionSpec(**{**data, "code_dir": Path(data["code_dir"]), "layer_dir": Path(data["layer_dir"])})
environment = Launcher({spec.logical_id: spec}, {})(spec)
print(environment.pid, flush=True)
environment.invoke({"action": "hold", "fifo": sys.argv[2]}, context_for(spec, "held"), 3600)
"""


def test_an_environment_dies_with_the_process_that_started_it(probe: FunctionSpec, tmp_path: Path) -> None:
    """Even mid-invocation (its handler blocked, never reading its pipe again): the kernel's parent-death
    signal, set by the runner, kills it when its parent is SIGKILLed."""
    fifo = tmp_path / "held"
    spec = {**asdict(probe), "code_dir": str(probe.code_dir), "layer_dir": str(probe.layer_dir)}
    held = Hold(fifo)
    parent = subprocess.Popen(
        [sys.executable, "-c", HELPER, json.dumps(spec), str(fifo)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        held.wait()  # the handler is inside its invocation, and stays there
        watch = os.pidfd_open(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=WAIT_SECONDS)
        readable, _, _ = select.select([watch], [], [], WAIT_SECONDS)
        os.close(watch)
        assert readable, f"environment {child} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        held.release()
