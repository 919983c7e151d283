"""The change feed's publisher: EventBridge PutEvents on the feed's bus."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from workspace_memory.governance.changefeed import MAX_BATCH

if TYPE_CHECKING:
    from workspace_memory.governance.changefeed import FeedEvent

SOURCE = "workspace-memory.changefeed"
DETAIL_TYPE = "workspace-memory change"


class EventBridgePublisher:
    """One PutEvents call per batch; an entry without an EventId (an ErrorCode instead) was not accepted."""

    def __init__(self, client: Any, bus_name: str) -> None:
        self._client = client
        self._bus = bus_name

    def publish(self, events: Sequence[FeedEvent]) -> set[int]:
        if len(events) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} events per PutEvents call")
        if not events:
            return set()
        entries = [
            {
                "EventBusName": self._bus,
                "Source": SOURCE,
                "DetailType": DETAIL_TYPE,
                "Detail": json.dumps(event.detail(), separators=(",", ":")),
            }
            for event in events
        ]
        try:
            answer = self._client.put_events(Entries=entries)
        except (BotoCoreError, ClientError):
            return set(range(len(events)))
        results = answer.get("Entries", [])
        return {i for i in range(len(events)) if i >= len(results) or not results[i].get("EventId")}
