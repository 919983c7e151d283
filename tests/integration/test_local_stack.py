"""`python -m scripts.localstack` (`make dev`) as a developer runs it: it comes up, serves the API and
Temporal, and after Ctrl-C exits 0 with every process it started gone; killed (SIGKILL), under make or on its
own, it leaves no process and no port behind, so the next start on the same ports comes up.

It does not depend on the worker: with or without `workflows.worker`, the stack must reach `ready:`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

import pytest
from temporalio.client import Client

from scripts.localstack.temporal import free_ports
from tests.processes import gone, within
from tests.support import dev_stack_environment, refuses, spawn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 30.0


def relay(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def read_until_ready(proc: subprocess.Popen[str], lines: queue.Queue[str | None], stderr: Path) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            code = proc.wait(timeout=STOP_TIMEOUT_SECONDS)
            pytest.fail(f"the stack exited ({code}) before 'ready:'\n{''.join(seen)}\n{stderr.read_text()}")
        seen.append(line)
        if line.startswith("ready:"):
            return seen
    pytest.fail(f"no 'ready:' line within {READY_TIMEOUT_SECONDS:.0f}s\n{''.join(seen)}\n{stderr.read_text()}")


def drain(lines: queue.Queue[str | None]) -> list[str]:
    rest: list[str] = []
    while (line := lines.get(timeout=STOP_TIMEOUT_SECONDS)) is not None:
        rest.append(line)
    return rest


def started(proc: subprocess.Popen[str], stderr: Path) -> tuple[queue.Queue[str | None], str]:
    """The stack's stdout lines as they come (a relay thread keeps its pipe from filling), and its banner."""
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=relay, args=(proc.stdout, lines), daemon=True).start()
    return lines, "".join(read_until_ready(proc, lines, stderr))


def descendants(pid: int) -> set[int]:
    """Every process below `pid` now: the children of each of its threads, recursively (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = {int(child) for child in (task / "children").read_text().split()}
            except OSError:
                continue  # the thread or process has just gone
            todo += children - found
            found |= children
    return found


def leave_nothing(proc: subprocess.Popen[str], pids: Iterable[int]) -> None:
    """Whatever a failed test left running: the stack (SIGTERM, then SIGKILL), then `pids`, the processes it
    started (in process groups of their own, so a test's failure must not leave them behind)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


async def count_workflows(address: str) -> int:
    client = await Client.connect(address)
    return (await client.count_workflows()).count


def assert_codec_round_trips(codec: str, ui: str) -> None:
    """The stack's codec server works as the UI uses it, with the stack's key and credentials: a payload it
    encodes is sealed (its data is not the plaintext) and decodes back, for a request from the UI's origin."""
    plain = {
        "metadata": {"encoding": base64.b64encode(b"json/plain").decode()},
        "data": base64.b64encode(b'"hi"').decode(),
    }

    def post(operation: str, body: Mapping[str, object]) -> dict[str, list[dict[str, object]]]:
        request = urllib.request.Request(
            f"{codec}/{operation}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Origin": ui},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200
            answer: dict[str, list[dict[str, object]]] = json.load(response)
            return answer

    sealed = post("encode", {"payloads": [plain]})
    assert sealed["payloads"][0]["data"] != plain["data"]
    assert post("decode", sealed)["payloads"] == [plain]


def test_local_stack_starts_serves_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    moto_port, gateway_port, temporal_port, ui_port, codec_port = free_ports(5)
    state_dir = tmp_path / "state"
    env = dev_stack_environment(state_dir, moto_port, gateway_port, temporal_port, ui_port, codec_port)
    stderr_path = tmp_path / "stderr.txt"
    child_pids: list[int] = []
    with stderr_path.open("w") as stderr:
        proc = spawn("scripts.localstack", env, stderr)
    try:
        lines, banner = started(proc, stderr_path)
        child_pids = [int(pid) for pid in re.findall(r"\bpid (\d+)", banner)]
        assert len(child_pids) >= 2, banner  # moto and Temporal, plus the worker once it exists

        with urllib.request.urlopen(f"http://127.0.0.1:{gateway_port}/v1/health", timeout=60) as response:
            assert response.status == 200

        found = re.search(r"^Temporal\s+(\S+)", banner, re.M)
        assert found, banner
        address = found.group(1)
        assert address == f"127.0.0.1:{temporal_port}"
        assert asyncio.run(count_workflows(address)) >= 0
        assert f"http://127.0.0.1:{ui_port}" in banner
        assert (state_dir / "temporal.db").is_file()
        codec = f"http://127.0.0.1:{codec_port}"
        assert re.search(rf"^codec server\s+{codec}\s.*pid \d+", banner, re.M), banner
        assert_codec_round_trips(codec, f"http://127.0.0.1:{ui_port}")
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/api/v1/settings", timeout=60) as response:
            assert json.load(response)["Codec"]["Endpoint"] == codec  # the UI decodes through it, unasked

        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=STOP_TIMEOUT_SECONDS) == 0, stderr_path.read_text()
        assert "stopped" in [line.strip() for line in drain(lines)]
        for port in (moto_port, gateway_port, temporal_port, ui_port, codec_port):
            assert refuses(port), f"port {port} still accepts connections after the stack stopped"
        for pid in child_pids:
            assert gone(pid), f"child process {pid} outlived the stack"
    finally:
        leave_nothing(proc, child_pids)


def sigkill_leaves_nothing(what: str, command: list[str], env: dict[str, str], ports: list[int], logs: Path) -> None:
    """Starts `command` (a stack on `ports`), SIGKILLs it once ready, and fails unless every process below it
    is gone and every port refuses connections in time."""
    stderr_path = logs / f"{what}.stderr"
    tree: set[int] = set()
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    try:
        _, banner = started(proc, stderr_path)
        tree = descendants(proc.pid)
        children = {int(pid) for pid in re.findall(r"\bpid (\d+)", banner)}
        assert len(children) == 3, banner  # moto, Temporal, the worker
        assert children <= tree, (banner, tree)

        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_SECONDS)
        if not within(STOP_TIMEOUT_SECONDS, lambda: all(map(gone, tree)) and all(map(refuses, ports))):
            left = sorted(pid for pid in tree if not gone(pid))
            held = [port for port in ports if not refuses(port)]
            pytest.fail(f"{what} SIGKILLed: processes {left} and ports {held} left\n{stderr_path.read_text()}")
    finally:
        leave_nothing(proc, tree)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tethers are Linux's PR_SET_PDEATHSIG")
def test_a_killed_stack_leaves_no_process_and_no_port_and_starts_again(tmp_path: Path) -> None:
    """`make dev` with its make SIGKILLed (the stack, tethered to make, stops in order); then, on the same
    ports, the stack started as make starts it, and SIGKILLed (its children, tethered to it, die with it)."""
    ports = free_ports(3)
    moto_port, gateway_port, temporal_port = ports
    env = dev_stack_environment(tmp_path / "state", moto_port, gateway_port, temporal_port, None)
    env = {k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # a make of its own
    sigkill_leaves_nothing("make dev", ["make", "-s", "dev"], env, ports, tmp_path)
    sigkill_leaves_nothing("the stack", [sys.executable, "-m", "scripts.localstack"], env, ports, tmp_path)
