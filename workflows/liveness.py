"""How a worker shows it is alive, so that the turn of a worker that died moves to another within seconds.

- **Heartbeats.** `Heartbeats` (a worker interceptor, so no activity's code changes) beats every
  `BEAT_SECONDS` from the worker's event loop while an activity that has a heartbeat timeout runs. A beat
  proves that the worker process lives, not that the call progresses: a hung model call is still bounded by
  its start-to-close timeout. The workflow gives its activities a 5 s heartbeat timeout
  (`workflows.turn_workflow.HEARTBEAT_TIMEOUT`), so a SIGKILLed worker's attempt is retried elsewhere
  within 5 s, where it waited the full start-to-close (120 s for a model round) before.
- **Throttle.** The SDK sends a recorded heartbeat at most every 0.8 x the heartbeat timeout (4 s, one second
  of slack); `HEARTBEAT_EVERY` sends one every second instead, so a live worker may miss four before its
  attempt is taken from it.
- **Sticky queue.** After an activity completes on another worker, the workflow's next task is offered first
  on the dead worker's sticky queue, and only after `STICKY_SCHEDULE_TO_START` on the shared one (the SDK's
  default is 10 s). A live worker polls its sticky queue all the time, so 3 s is only exceeded by one too
  busy to take it, which then costs another worker a replay of the history, not an error.

The long-running worker and the Lambda worker take the same options (`with_liveness`).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    WorkerConfig,
)

BEAT_SECONDS = 1.0
HEARTBEAT_EVERY = timedelta(seconds=BEAT_SECONDS)
STICKY_SCHEDULE_TO_START = timedelta(seconds=3)


class Heartbeats(Interceptor):
    """Every activity with a heartbeat timeout heartbeats while it runs."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Beating(next)


class _Beating(ActivityInboundInterceptor):
    _outbound: ActivityOutboundInterceptor

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        self._outbound = outbound
        super().init(outbound)

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if activity.info().heartbeat_timeout is None:
            return await super().execute_activity(input)
        beats = asyncio.create_task(self._beat())
        try:
            return await super().execute_activity(input)
        finally:
            beats.cancel()

    async def _beat(self) -> None:
        # On the event loop, where the SDK's own heartbeat runs: a synchronous activity's thread is busy.
        while True:
            self._outbound.heartbeat()
            await asyncio.sleep(BEAT_SECONDS)  # a cadence, not a wait for anything


def with_liveness(config: WorkerConfig) -> WorkerConfig:
    """`config` with the heartbeat interceptor (after any already there), the throttle and the sticky queue's
    timeout."""
    lively = config.copy()
    lively["interceptors"] = [*config.get("interceptors", ()), Heartbeats()]
    lively["max_heartbeat_throttle_interval"] = HEARTBEAT_EVERY
    lively["sticky_queue_schedule_to_start_timeout"] = STICKY_SCHEDULE_TO_START
    return lively
