"""Execution environments per function, scaled as Lambda scales them: an idle one is reused; when all are
busy a new one starts (a cold start), up to `cap` per function; beyond that a request waits for one to be
free; one idle for IDLE_SECONDS is stopped when its function is next called.

Unlike Lambda, the machine is small: a cold start (the imports, then the services its first request builds)
costs seconds of CPU, and sixteen at once on two shared cores push every first request past its timeout. So
at most `cold_limit` (the CPUs, at least two) environments of all functions together are in their cold start
at once: from spawn to their first answer, or COLD_SLOT_SECONDS, whichever comes first (a first request that
blocks must not stop its function from scaling). A request that finds none idle waits for whichever comes
first, a free environment or a cold-start slot. That changes how fast a burst scales out, never what an
environment is: one request at a time, in a process of its own.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from scripts.localstack.environments import ColdStart, Environment, InitError, Invocation
from scripts.localstack.functions import FunctionSpec, time_scale
from scripts.localstack.runtime import LambdaContext

DEFAULT_CAP = 16
COLD_SLOT_SECONDS = 10.0
IDLE_SECONDS = 600.0
QUEUE_TIMEOUT_SECONDS = 60.0
"""How long a request waits for an environment (API Gateway gives up at 30 s; two shared cores starting the
stack's first environments can take longer)."""


class NoEnvironment(RuntimeError):
    """No environment of the function became free within QUEUE_TIMEOUT_SECONDS, or the gateway is stopping."""


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


class Scheduler:
    """What the pools share: one condition (an environment freed or a cold start ended wakes every waiter,
    each re-checks its own pool) and the cold starts under way, by when they began."""

    def __init__(self, cold_limit: int) -> None:
        self.changed = threading.Condition()
        self.cold_limit = cold_limit
        self._cold: dict[int, float] = {}
        self._tokens = itertools.count()

    def claim(self) -> int | None:
        """A cold-start slot (its token), or None while all are taken. Call with `changed` held."""
        now = time.monotonic()
        self._cold = {token: since for token, since in self._cold.items() if now - since < COLD_SLOT_SECONDS}
        if len(self._cold) >= self.cold_limit:
            return None
        token = next(self._tokens)
        self._cold[token] = now
        return token

    def next_slot_in(self) -> float:
        """Seconds until the oldest cold start stops holding its slot (infinite: none holds one)."""
        if not self._cold:
            return math.inf
        return max(0.0, min(self._cold.values()) + COLD_SLOT_SECONDS - time.monotonic())

    def end(self, token: int) -> None:
        self._cold.pop(token, None)


class FunctionPool:
    """The environments of one function (see the module docstring)."""

    def __init__(
        self, spec: FunctionSpec, start: Callable[[FunctionSpec], Environment], scheduler: Scheduler, cap: int
    ) -> None:
        self.spec = spec
        self._start = start
        self._scheduler = scheduler
        self._cap = cap
        self._idle: list[tuple[Environment, float]] = []  # and since when, most recent last
        self._count = 0  # environments running or starting
        self._closed = False

    def invoke(self, event: dict[str, Any], request_id: str | None = None) -> Invocation:
        try:
            environment, cold = self._acquire(time.monotonic() + QUEUE_TIMEOUT_SECONDS * time_scale())
        except InitError:
            return Invocation("init_error")
        context = context_for(self.spec, request_id or str(uuid.uuid4()))
        try:
            return environment.invoke(event, context, self.spec.allowed_seconds)
        finally:
            self._release(environment, cold)

    def _acquire(self, deadline: float) -> tuple[Environment, int | None]:
        """An idle environment, or a new one with its cold-start token (this request is its cold start)."""
        scheduler = self._scheduler
        with scheduler.changed:
            self._reap()
            while True:  # each turn takes an idle one, claims a cold start, or waits; never past the deadline
                if self._closed:
                    raise NoEnvironment(f"{self.spec.logical_id}: the gateway is stopping")
                while self._idle:
                    environment, _ = self._idle.pop()
                    if environment.alive():
                        return environment, None
                    self._count -= 1
                token = scheduler.claim() if self._count < self._cap else None
                if token is not None:
                    self._count += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NoEnvironment(f"{self.spec.logical_id}: all {self._count} environments stayed busy")
                scheduler.changed.wait(min(remaining, scheduler.next_slot_in()))
        try:
            return self._start(self.spec), token
        except BaseException:
            self._settle(None, token)
            raise

    def _release(self, environment: Environment, token: int | None) -> None:
        self._settle(environment, token)
        if self._closed:
            environment.close()

    def _settle(self, environment: Environment | None, token: int | None) -> None:
        """Back to the idle list if it lives (else it no longer counts), its cold start over if it was one."""
        scheduler = self._scheduler
        with scheduler.changed:
            if token is not None:
                scheduler.end(token)
            if environment is not None and environment.alive() and not self._closed:
                self._idle.append((environment, time.monotonic()))
            else:
                self._count -= 1
            scheduler.changed.notify_all()

    def _reap(self) -> None:
        """Stops the environments idle for IDLE_SECONDS, as Lambda reclaims them (each holds 100-200 MB).
        Call with the scheduler's condition held; the oldest idle ones come first in the list."""
        now = time.monotonic()
        stale = [environment for environment, since in self._idle if now - since > IDLE_SECONDS]
        if stale:
            self._idle = self._idle[len(stale) :]
            self._count -= len(stale)
            for environment in stale:
                threading.Thread(target=environment.close, name="environment-reaper", daemon=True).start()

    def size(self) -> int:
        with self._scheduler.changed:
            return self._count

    def close(self) -> None:
        """Stops the idle environments; a busy one is stopped when its invocation ends."""
        with self._scheduler.changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._scheduler.changed.notify_all()
        for environment, _ in idle:
            environment.close()


class Environments:
    """A pool per function of the template, one scheduler for all, and the cold starts they have seen."""

    def __init__(
        self,
        specs: Mapping[str, FunctionSpec],
        start: Callable[[FunctionSpec], Environment],
        cap: int = DEFAULT_CAP,
        cold_limit: int | None = None,
    ) -> None:
        self.specs = dict(specs)
        scheduler = Scheduler(cold_limit or max(2, os.cpu_count() or 1))
        self.pools = {name: FunctionPool(spec, start, scheduler, cap) for name, spec in specs.items()}
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
