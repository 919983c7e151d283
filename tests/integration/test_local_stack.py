"""`python -m scripts.localstack` (`make dev`) as a developer runs it: it comes up, serves the API and
Temporal, and after Ctrl-C exits 0 with every process it started gone.

It does not depend on the worker: with or without `workflows.worker`, the stack must reach `ready:`.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

import pytest
from temporalio.client import Client

from scripts.localstack.temporal import free_ports
from tests.support import dev_stack_environment, refuses, spawn

pytestmark = pytest.mark.integration

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


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def count_workflows(address: str) -> int:
    client = await Client.connect(address)
    return (await client.count_workflows()).count


def test_local_stack_starts_serves_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    moto_port, gateway_port, temporal_port, ui_port = free_ports(4)
    state_dir = tmp_path / "state"
    env = dev_stack_environment(state_dir, moto_port, gateway_port, temporal_port, ui_port)
    stderr_path = tmp_path / "stderr.txt"
    child_pids: list[int] = []
    with stderr_path.open("w") as stderr:
        proc = spawn("scripts.localstack", env, stderr)
    try:
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=relay, args=(proc.stdout, lines), daemon=True).start()
        banner = "".join(read_until_ready(proc, lines, stderr_path))
        child_pids = [int(pid) for pid in re.findall(r"\bpid (\d+)", banner)]
        assert len(child_pids) >= 2, banner  # moto and Temporal, plus the worker once it exists

        with urllib.request.urlopen(f"http://127.0.0.1:{gateway_port}/v1/health", timeout=10) as response:
            assert response.status == 200

        found = re.search(r"^Temporal\s+(\S+)", banner, re.M)
        assert found, banner
        address = found.group(1)
        assert address == f"127.0.0.1:{temporal_port}"
        assert asyncio.run(count_workflows(address)) >= 0
        assert f"http://127.0.0.1:{ui_port}" in banner
        assert (state_dir / "temporal.db").is_file()

        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=STOP_TIMEOUT_SECONDS) == 0, stderr_path.read_text()
        assert "stopped" in [line.strip() for line in drain(lines)]
        for port in (moto_port, gateway_port, temporal_port, ui_port):
            assert refuses(port), f"port {port} still accepts connections after the stack stopped"
        for pid in child_pids:
            assert gone(pid), f"child process {pid} outlived the stack"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in child_pids:  # children run in their own process groups: never leave them behind
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
