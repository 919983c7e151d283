"""Execution environments per function, scaled as Lambda scales them: an idle one is reused; when all are
busy a new one starts (a cold start), up to `cap` per function; beyond that a request waits for one to be
free. At most `starting` environments of a function start at once, so a burst on two shared cores does not
start sixteen interpreters together and push every first request past its timeout.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from scripts.localstack.environments import ColdStart, Environment, InitError, Invocation
from scripts.localstack.functions import FunctionSpec
from scripts.localstack.runtime import LambdaContext

DEFAULT_CAP = 16
DEFAULT_STARTING = 2
QUEUE_TIMEOUT_SECONDS = 30.0
"""How long a request waits for a free environment: API Gateway's own integration timeout."""


class NoEnvironment(RuntimeError):
    """Every environment of the function stayed busy for QUEUE_TIMEOUT_SECONDS."""


def context_for(spec: FunctionSpec, request_id: str) -> LambdaContext:
    """A context as Lambda gives one, its deadline the function's timeout from now."""
    return LambdaContext(
        function_name=spec.logical_id,
        aws_request_id=request_id,
        memory_limit_in_mb=spec.memory_mb,
        invoked_function_arn=f"arn:aws:lambda:us-east-1:000000000000:function:{spec.logical_id}",
        log_group_name=f"/aws/lambda/{spec.logical_id}",
        log_stream_name=f"local/{spec.logical_id}",
        deadline_ms=int((time.time() + spec.timeout) * 1000),
    )


class FunctionPool:
    """The environments of one function (see the module docstring)."""

    def __init__(
        self,
        spec: FunctionSpec,
        start: Callable[[FunctionSpec], Environment],
        cap: int = DEFAULT_CAP,
        starting: int = DEFAULT_STARTING,
    ) -> None:
        self.spec = spec
        self._start = start
        self._cap = cap
        self._starting_cap = starting
        self._idle: list[Environment] = []
        self._count = 0  # environments running or starting
        self._starting = 0
        self._closed = False
        self._free = threading.Condition()

    def invoke(self, event: dict[str, Any], request_id: str | None = None) -> Invocation:
        try:
            environment = self._acquire(time.monotonic() + QUEUE_TIMEOUT_SECONDS)
        except InitError:
            return Invocation("init_error")
        context = context_for(self.spec, request_id or str(uuid.uuid4()))
        try:
            return environment.invoke(event, context, self.spec.timeout)
        finally:
            self._release(environment)

    def _acquire(self, deadline: float) -> Environment:
        with self._free:
            while True:  # each turn takes an idle one, starts one, or waits until the deadline
                if self._closed:
                    raise NoEnvironment(f"{self.spec.logical_id}: the gateway is stopping")
                while self._idle:
                    environment = self._idle.pop()
                    if environment.alive():
                        return environment
                    self._count -= 1
                if self._count < self._cap and self._starting < self._starting_cap:
                    self._count += 1
                    self._starting += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._free.wait(remaining):
                    raise NoEnvironment(f"{self.spec.logical_id}: all {self._count} environments stayed busy")
        try:
            return self._start(self.spec)
        except BaseException:
            with self._free:
                self._count -= 1
                self._free.notify()
            raise
        finally:
            with self._free:
                self._starting -= 1
                self._free.notify()

    def _release(self, environment: Environment) -> None:
        with self._free:
            if environment.alive() and not self._closed:
                self._idle.append(environment)
            else:
                self._count -= 1
            self._free.notify()
        if self._closed:
            environment.close()

    def size(self) -> int:
        with self._free:
            return self._count

    def close(self) -> None:
        """Stops the idle environments; a busy one is stopped when its invocation ends."""
        with self._free:
            self._closed = True
            idle, self._idle = self._idle, []
            self._free.notify_all()
        for environment in idle:
            environment.close()


class Environments:
    """A pool per function of the template, and the cold starts they have seen."""

    def __init__(
        self,
        specs: Mapping[str, FunctionSpec],
        start: Callable[[FunctionSpec], Environment],
        cap: int = DEFAULT_CAP,
    ) -> None:
        self.specs = dict(specs)
        self.pools = {name: FunctionPool(spec, start, cap) for name, spec in specs.items()}
        self._cold_starts: list[ColdStart] = []
        self._lock = threading.Lock()

    def record(self, cold_start: ColdStart) -> None:
        with self._lock:
            self._cold_starts.append(cold_start)

    def cold_starts(self) -> list[ColdStart]:
        with self._lock:
            return list(self._cold_starts)

    def invoke(self, function: str, event: dict[str, Any], request_id: str | None = None) -> Invocation:
        return self.pools[function].invoke(event, request_id)

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
