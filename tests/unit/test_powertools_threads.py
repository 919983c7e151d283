"""Two requests resolved at once in one process each see their own event (scripts/localstack/powertools_threads.py):
what the local gateway needs, since Powertools keeps the event being resolved on a class, once per process."""

from __future__ import annotations

import threading
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from scripts.localstack.powertools_threads import per_thread_events
from tests.unit.fakes import get_event


def resolver(seen: list[str], reached: threading.Event | None = None, go: threading.Event | None = None) -> Any:
    """A resolver whose one route records the path it finds in `current_event`, optionally pausing mid-request."""
    app = APIGatewayHttpResolver()

    @app.get("/<name>")
    def route(name: str) -> dict[str, str]:
        if reached is not None and go is not None:
            reached.set()
            assert go.wait(timeout=30)
        seen.append(app.current_event.path)
        return {}

    return app


def test_a_request_paused_while_another_is_resolved_still_reads_its_own_event() -> None:
    per_thread_events()
    per_thread_events()  # idempotent
    reached, go = threading.Event(), threading.Event()
    seen: list[str] = []
    first, second = resolver(seen, reached, go), resolver(seen)

    paused = threading.Thread(target=first.resolve, args=(get_event("/first"), None))
    paused.start()
    assert reached.wait(timeout=30)
    second.resolve(get_event("/second"), None)  # Powertools sets the class's event to this one
    go.set()
    paused.join(timeout=30)

    assert seen == ["/second", "/first"]
