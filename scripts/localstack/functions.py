"""The template's functions as the local stack runs them: where the built code is, the runtime, the timeout
and memory, and the environment Lambda would give each one, resolved for the local stack.

A variable the template declares (Globals, then the function's own `Environment.Variables`) reaches only the
functions that declare it: with the local stack's value when it has one (TABLE_NAME, KMS_KEY_ID, TEMPORAL_*,
CHANGE_FEED_BUS_NAME, ...), else the template's literal; an intrinsic the stack cannot resolve (the turn
worker's API URL, say) is left out. A variable the template declares nowhere (credentials, region, the local
endpoint, the local-only clock) is the runtime's or the local stack's, and reaches every function.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.localstack.resources import AWS_ISOLATION, LocalResources
from scripts.localstack.template import ROOT
from workspace_memory.kernel.settings import LOCAL_CLOCK_FILE, LOCAL_STACK_FLAG

DEFAULT_TIMEOUT_SECONDS = 3.0
DEFAULT_MEMORY_MB = 128
"""Lambda's defaults, for a function and Globals that say nothing."""
LAYER_SOURCE = "layers/core"
TRACE_DISABLED = "POWERTOOLS_TRACE_DISABLED"


TIME_SCALE = "WM_LOCAL_TIME_SCALE"
"""How many times Lambda's limits the local stack allows (a function's timeout, an init, a wait for an
environment): 1, Lambda's own, unless set. A Lambda has its CPU to itself; a 2-core machine running a test
suite's two stacks at once does not, so the suite sets 4 (tests/conftest.py): a loaded machine makes it slower,
never red. What a handler is told is Lambda's (its context's deadline is the template's timeout from now), and
killing an environment past its limit is unchanged (tests/integration/test_lambda_environments.py checks it on
a 2 s timeout)."""


@functools.cache
def time_scale() -> float:
    """Read and checked once per process: a bad value fails the first environment start, then every call."""
    raw = os.environ.get(TIME_SCALE, "1")
    try:
        scale = float(raw)
    except ValueError:
        scale = 0.0
    if not 1.0 <= scale <= 100.0:
        raise ValueError(f"{TIME_SCALE}={raw!r}: a number from 1 to 100")
    return scale


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    handler: str
    runtime: str
    timeout: float
    """The template's Timeout, in seconds (an invocation runs for `allowed_seconds`)."""
    memory_mb: int
    code_dir: Path
    """The function's built code (what an environment imports first), or its CodeUri in the sources."""
    layer_dir: Path
    """The layer's import root in the same build."""
    variables: Mapping[str, str | None]
    """The template's variables: a literal, or None for an intrinsic only the local stack can resolve."""

    def environment(self, stack: Mapping[str, str], declared_anywhere: frozenset[str]) -> dict[str, str]:
        """What this function's process sees (see the module docstring), with Lambda's reserved variables."""
        env = {name: value for name, value in stack.items() if name not in declared_anywhere}
        for name, literal in self.variables.items():
            value = stack.get(name, literal)
            if value is not None:
                env[name] = value
        return {
            **AWS_ISOLATION,
            **env,
            "AWS_LAMBDA_FUNCTION_NAME": self.logical_id,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(self.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{self.logical_id}",
            "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{self.runtime}",
            "LAMBDA_TASK_ROOT": str(self.code_dir),
            "_HANDLER": self.handler,
            "TZ": ":UTC",
            "LANG": "C.UTF-8",
            "PATH": os.defpath,
        }

    @property
    def allowed_seconds(self) -> float:
        """Seconds an invocation may run before its environment is killed: the timeout, times `time_scale()`."""
        return self.timeout * time_scale()


def stack_environment(
    resources: LocalResources,
    temporal_address: str,
    namespace: str,
    task_queue: str,
    clock_file: Path | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What the local stack resolves for its functions: fake credentials, the local endpoint, the table, the
    key, Temporal, the local-stack flag, tracing off (no X-Ray daemon listens here: powertools' Tracer would
    otherwise be on, the environments set LAMBDA_TASK_ROOT) and (when given) its clock file, then `extra`."""
    clock = {} if clock_file is None else {LOCAL_CLOCK_FILE: str(clock_file)}
    return {
        **resources.environment(),
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_NAMESPACE": namespace,
        "TEMPORAL_TASK_QUEUE": task_queue,
        LOCAL_STACK_FLAG: "1",
        TRACE_DISABLED: "true",
        **clock,
        **(extra or {}),
    }


def _literal(value: Any) -> str | None:
    return None if isinstance(value, dict) else str(value)


def function_specs(template: dict[str, Any], build: Path | None, root: Path = ROOT) -> dict[str, FunctionSpec]:
    """Every AWS::Serverless::Function of the template, by logical id, loaded from `build` (`sam build`'s
    output: one directory per function, the layer under CoreLayer/python), or from the sources (None)."""
    from scripts.artifact.layer import site_packages

    defaults = (template.get("Globals") or {}).get("Function") or {}
    shared = (defaults.get("Environment") or {}).get("Variables") or {}
    found = {}
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        own = (props.get("Environment") or {}).get("Variables") or {}
        found[logical_id] = FunctionSpec(
            logical_id=logical_id,
            handler=props["Handler"],
            runtime=props.get("Runtime", defaults.get("Runtime", "python3.13")),
            timeout=float(props.get("Timeout", defaults.get("Timeout", DEFAULT_TIMEOUT_SECONDS))),
            memory_mb=int(props.get("MemorySize", defaults.get("MemorySize", DEFAULT_MEMORY_MB))),
            code_dir=root / props["CodeUri"] if build is None else build / logical_id,
            layer_dir=root / LAYER_SOURCE if build is None else site_packages(build),
            variables={name: _literal(value) for name, value in {**shared, **own}.items()},
        )
    return found


def declared_names(specs: Mapping[str, FunctionSpec]) -> frozenset[str]:
    """Every variable name some function of the template declares."""
    return frozenset(name for spec in specs.values() for name in spec.variables)
