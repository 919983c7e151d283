"""Shortening the retention reaches search (issue 17 finding 10a, docs/decisions/0056): over HTTP, with the
stack's clock pinned, a revision a shorter retention expired is found neither by a warm index nor by a cold
process starting from the search snapshot, and no snapshot item outlives the retention of what it holds."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from scripts.localstack.local_clock import PinnedClock
from scripts.localstack.resources import LocalResources
from scripts.localstack.stack import LocalStack
from tests.support import Api, new_user, scan_all
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds
from workspace_memory.search.entry_search import SNAPSHOT_AFTER
from workspace_memory.store import keys

pytestmark = pytest.mark.integration


@pytest.fixture
def pinned_clock(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    """Every function of the stack reads this clock: the test moves time instead of waiting."""
    with local_stack.pinned_clock(float(int(time.time()))) as clock:
        yield clock


def rfc3339(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def create(api: Api, owner: str, ws: str, title: str) -> str:
    body = {"scope": "workspace", "type": "fact", "title": title, "summary": title, "body": title}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert created.status_code == 201, created.text
    entry_id: str = created.json()["entryId"]
    return entry_id


def search(api: Api, owner: str, ws: str, entry_id: str, q: str, as_of: float | None = None) -> list[tuple[str, int]]:
    """The revisions of `entry_id` a search finds. Only that entry's: the query is a random marker, and a
    marker's vector lands near some filler's often enough (about 1 in 20) that the fillers can be hits too."""
    params = {"q": q, "k": "20", **({} if as_of is None else {"asOf": rfc3339(as_of)})}
    found = api.call("GET", f"/v1/workspaces/{ws}/search?{urlencode(params)}", user=owner)
    assert found.status_code == 200, found.text
    return [(r["entryId"], r["revision"]) for r in found.json()["results"] if r["entryId"] == entry_id]


def snapshot_items(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    return [i for i in scan_all(resources) if i["pk"]["S"] == keys.ws(ws) and i["sk"]["S"].startswith("SEARCHSNAP#")]


def test_a_shorter_retention_expires_revisions_for_warm_and_snapshot_search(
    api: Api, resources: LocalResources, pinned_clock: PinnedClock
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    marker = f"OLDREV{uuid.uuid4().hex[:10]}"
    entry_id = create(api, owner, ws, f"{marker} first wording")
    written = pinned_clock.now()
    for n in range(SNAPSHOT_AFTER + 1):  # enough revisions that the first search stores a snapshot
        create(api, owner, ws, f"Filler {n} about nothing")
    pinned_clock.advance(2 * DAY_SECONDS)
    superseded_at = pinned_clock.now()
    body = {"type": "fact", "title": "Second wording", "summary": "Second wording", "body": "Second wording"}
    moved = api.call(
        "PUT", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner, json=body, headers={"X-Base-Revision": "1"}
    )
    assert moved.status_code == 200, moved.text

    as_of = written + DAY_SECONDS  # revision 1 was the current one then
    pinned_clock.advance(DAY_SECONDS / 2)  # the snapshot is built half a day after revision 1 was superseded
    assert search(api, owner, ws, entry_id, marker, as_of) == [(entry_id, 1)]  # warm, and the snapshot stored
    assert snapshot_items(resources, ws)

    shortened = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"historyDays": 1})
    assert shortened.status_code == 200, shortened.text
    revision = next(
        i
        for i in scan_all(resources)
        if i["pk"]["S"] == keys.ws(ws) and i["sk"]["S"] == keys.entry_revision(ws, entry_id, 1)[1]
    )
    due = epoch_seconds(revision["supersededAt"]["S"]) + DAY_SECONDS
    assert abs(due - (superseded_at + DAY_SECONDS)) < 2
    assert int(revision["ttl"]["N"]) == due
    assert all(int(i["ttl"]["N"]) <= due for i in snapshot_items(resources, ws))  # none outlives the retention

    assert search(api, owner, ws, entry_id, marker, as_of) == [(entry_id, 1)]  # still within the day: found, warm again
    pinned_clock.advance(DAY_SECONDS / 2 + 60)  # revision 1 is past the shorter retention (not the old 90 days)
    for _ in range(3):  # whichever execution environment answers, warm or cold
        assert search(api, owner, ws, entry_id, marker, as_of) == []
        assert (entry_id, 1) not in search(api, owner, ws, entry_id, marker)
    assert all(int(i["ttl"]["N"]) <= pinned_clock.now() + DAY_SECONDS for i in snapshot_items(resources, ws))
