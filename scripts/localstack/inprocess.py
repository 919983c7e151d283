"""Handlers in this process, loaded from the repository's sources: the old local gateway's model
(`Gateway(mode="threads")`), kept where the code under test must be this process's own: the benchmark's turns
count the handlers' AWS calls on this process's clients, and mutation testing (scripts/mutation.py) mutates
the modules this process imports.

Not isolated: powertools keeps the current event on the resolver class, so concurrent requests in one
interpreter can answer as each other, whatever module copy serves them.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from scripts.localstack.environments import Invocation
from scripts.localstack.functions import FunctionSpec
from scripts.localstack.runtime import Handler, LambdaContext

_copies = itertools.count(1)


def load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_handler(code_dir: Path, handler: str, name: str) -> Handler:
    """`handler` (`app.handler`) from a fresh copy of its module below `code_dir`, named `name`."""
    module_name, _, attr = handler.rpartition(".")
    loaded: Handler = getattr(load_module(name, code_dir / f"{module_name}.py"), attr)
    return loaded


def tee_service_logs(path: Path) -> Callable[[], None]:
    """Appends the service logger's lines to `path`, as the environment processes write theirs (so a test
    reads the function log either way); returns what undoes it."""
    from workspace_memory.api.http import logger

    stream = path.open("a", encoding="utf-8")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger._logger.addHandler(handler)

    def undo() -> None:
        logger._logger.removeHandler(handler)
        stream.close()

    return undo


class InProcessEnvironment:
    """A module copy of the function's handler (`spec` read from the sources), run on the calling thread (no
    timeout: nothing to kill)."""

    def __init__(self, spec: FunctionSpec) -> None:
        self._handler = load_handler(spec.code_dir, spec.handler, f"lambda_{spec.logical_id}_{next(_copies)}")

    def invoke(self, event: dict[str, Any], context: LambdaContext, timeout: float) -> Invocation:  # noqa: ARG002
        try:
            return Invocation("result", self._handler(event, context))
        except Exception as exc:
            return Invocation("error", error_type=type(exc).__name__)

    def alive(self) -> bool:
        return True

    def close(self) -> None:
        pass
