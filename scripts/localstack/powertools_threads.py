"""The event Powertools is resolving, one per thread instead of one per process.

Powertools' event handler keeps the request it is resolving on the class `BaseRouter` (`current_event`,
`lambda_context`): one slot per process, which is right in Lambda (one request per execution environment at a
time) and wrong in the local gateway, which runs several handler instances in one process. Two concurrent
requests, even on two instances, then read each other's event: a Save validated against a concurrent read's
missing body (400 "body: Field required"), or answered as another caller. `per_thread_events()` gives each
thread its own slot, so every request the gateway runs sees only its own event, as in Lambda.
"""

from __future__ import annotations

import threading
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

_SLOTS = ("current_event", "lambda_context")


class _PerThread:
    """An attribute whose value is the calling thread's own (unset in a thread that never set it)."""

    def __init__(self, name: str, local: threading.local) -> None:
        self._name = name
        self._local = local

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        try:
            return getattr(self._local, self._name)
        except AttributeError:
            raise AttributeError(self._name) from None

    def __set__(self, obj: object, value: Any) -> None:
        setattr(self._local, self._name, value)


def per_thread_events() -> None:
    """Idempotent. Instances read and write the slots through `BaseRouter`'s own attributes; `resolve` assigns
    them on the class itself (`BaseRouter.current_event = …`), which only a metaclass attribute intercepts."""
    if getattr(type(BaseRouter), "per_thread_events", False):
        return
    local = threading.local()
    slots = {name: _PerThread(name, local) for name in _SLOTS}
    for name, slot in slots.items():
        setattr(BaseRouter, name, slot)  # before the metaclass changes: a plain class attribute
    meta = type("PerThreadRouterMeta", (type(BaseRouter),), {**slots, "per_thread_events": True})
    setattr(BaseRouter, "__class__", meta)  # noqa: B010  # the class object changes its type
