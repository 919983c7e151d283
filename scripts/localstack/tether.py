"""Processes that die with the one that started them, whatever kills it (SIGKILL included).

Linux's `prctl(PR_SET_PDEATHSIG)` makes the kernel signal a process when its parent dies, and it survives
`exec`. `tethered(command)` runs `command` through this file: a bare interpreter (`-I -S`, stdlib only) that
sets it and then execs the command, so the real child keeps the pid and the tether. A `preexec_fn` would run
Python between fork and exec, which can deadlock in a parent that has threads (the gateway's, the worker
relay's).

For the kernel, the parent is the *thread* that forked: a child started from a short-lived thread would die
with that thread, so `tethered` tethers only from the main thread (elsewhere the command is left as it is).
Nothing happens on other systems than Linux: there, only an orderly stop stops the children.

Run as a script: `python tether.py <parent pid> <command...>`.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Sequence

PR_SET_PDEATHSIG = 1
SUPPORTED = sys.platform.startswith("linux")


def tether(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """This process gets `sig` when its parent dies. With `parent` (the pid that started it): if that one has
    died already, before the tether was set, `sig` comes now."""
    if not SUPPORTED:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def tethered(command: Sequence[str]) -> list[str]:
    """`command`, run so that it is SIGKILLed when this process dies (on Linux, from the main thread)."""
    if not SUPPORTED or threading.current_thread() is not threading.main_thread():
        return list(command)
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()), *command]


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    tether(signal.SIGKILL, parent)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
