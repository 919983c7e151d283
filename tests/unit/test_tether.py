"""`scripts/localstack/tether.py`: a tethered child dies with its parent, even a SIGKILLed one; only the main
thread tethers (the kernel's "parent" is the thread that forked)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scripts.localstack.tether import tethered
from tests.processes import gone, within

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PARENT = """
import subprocess, sys
from scripts.localstack.tether import tethered
child = subprocess.Popen(tethered([sys.executable, "-c", "import time; time.sleep(60)"]))
print(child.pid, flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_tethered_child_dies_with_its_sigkilled_parent() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        # The wrapper execs the command in place: the pid becomes the command's, tether included.
        assert within(10, lambda: b"time.sleep(60)" in Path(f"/proc/{child}/cmdline").read_bytes())
        parent.kill()
        parent.wait(timeout=10)
        assert within(10, lambda: gone(child)), "the tethered child outlived its SIGKILLed parent"
    finally:
        if not gone(child):
            os.kill(child, signal.SIGKILL)


def test_only_the_main_thread_tethers() -> None:
    command = ["temporal", "server", "start-dev"]
    elsewhere: list[list[str]] = []
    thread = threading.Thread(target=lambda: elsewhere.append(tethered(command)))
    thread.start()
    thread.join()
    assert elsewhere == [command]
    here = tethered(command)
    if sys.platform.startswith("linux"):
        assert here[-len(command) :] == command
        assert here[: len(here) - len(command)] == [sys.executable, "-I", "-S", here[3], str(os.getpid())]
    else:
        assert here == command
