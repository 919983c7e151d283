"""Cold start: the import of each handler module against a bare `import boto3`, in fresh interpreters.

A Lambda cold start imports its handler module before the first request. This times that import alone,
inside a fresh child interpreter around `importlib.import_module` (interpreter start-up is not in it), with
warm bytecode, as a deployed function has it: PYTHONDONTWRITEBYTECODE is unset for the children, and every
module is imported once first, untimed, so its .pyc files exist. The modules then run round-robin, `runs`
times each, so the drift of a busy machine falls on all of them alike; the table gives the medians and their
ratio to boto3's, measured in the same run; wall time (what a cold start waits for) and the process's CPU
time (what the import costs it, which the load of a shared machine distorts less).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from scripts.bench.stats import ImportTime
from scripts.localstack.template import ROOT, load_template, routes

BASELINE = "boto3"
PROBE = (
    "import importlib, sys, time\n"
    "wall, cpu = time.perf_counter(), time.process_time()\n"
    "importlib.import_module(sys.argv[1])\n"
    "print((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000)\n"
)


def handler_modules(template: dict[str, Any] | None = None) -> list[str]:
    """The module of every function the template routes HTTP to (`functions.memory.app`, ...), sorted."""
    found = set()
    for route in routes(template if template is not None else load_template()):
        package = route.code_dir.resolve().relative_to(ROOT).parts
        module = route.handler.rpartition(".")[0]
        found.add(".".join([*package, module]))
    return sorted(found)


def child_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment, but writing bytecode (so the warm-up leaves it for the timed runs)."""
    return {k: v for k, v in (env if env is not None else os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}


def import_time(module: str, env: dict[str, str]) -> ImportTime:
    """One cold import of `module` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"`import {module}` failed in a fresh interpreter:\n{done.stderr.strip()}")
    wall, cpu = done.stdout.split()
    return ImportTime(float(wall), float(cpu))


def measure_cold_imports(modules: Sequence[str], runs: int) -> list[tuple[str, list[ImportTime]]]:
    """`runs` timed imports of each module after one untimed warm-up import each, round-robin."""
    env = child_environment()
    for module in modules:
        import_time(module, env)  # writes the bytecode; not timed
    samples: dict[str, list[ImportTime]] = {module: [] for module in modules}
    for _ in range(runs):
        for module in modules:
            samples[module].append(import_time(module, env))
    return [(module, samples[module]) for module in modules]
