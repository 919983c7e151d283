"""Active agent memories expire over HTTP on the local stack, its clock pinned and moved (no sleeps): an agent's
entry not renewed within `agentDays` is gone from reads, lists, search and recall at once, before any TTL
deleter ran; a person's entry stays; the owner's window is read and set on the retention route."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from scripts.localstack.local_clock import PinnedClock
from scripts.localstack.stack import LocalStack
from tests.integration.entries.test_agent_entry_api import admitted, agent_save, agent_workspace
from tests.integration.entries.test_entries import create, entry
from tests.integration.turns.test_automation_api import recall
from tests.support import Api

pytestmark = pytest.mark.integration

DAY = 86_400


@pytest.fixture
def pinned_clock(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    with local_stack.pinned_clock(time.time()) as clock:
        yield clock


def visible(api: Api, owner: str, ws: str) -> tuple[set[str], set[str]]:
    """The entry ids the entry list and a search show the owner."""
    listed = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"]
    results = api.call("GET", f"/v1/workspaces/{ws}/search?q=Fridays", user=owner).json()["results"]
    return {e["entryId"] for e in listed}, {r["entryId"] for r in results}


def test_an_agent_memory_past_its_window_is_gone_everywhere(api: Api, pinned_clock: PinnedClock) -> None:
    owner, ws = agent_workspace(api, "auto")
    window = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"agentDays": 7})
    assert (window.status_code, window.json()) == (200, {"historyDays": 90, "agentDays": 7})
    saved = agent_save(api, ws, admitted(api, ws, owner), uuid.uuid4().hex, title="Agent note")
    assert saved.status_code == 200, saved.text
    agent = saved.json()["entryId"]
    person = create(api, owner, ws, entry("Person note"))
    assert visible(api, owner, ws) == ({agent, person}, {agent, person})
    assert agent in recall(api, ws, admitted(api, ws, owner)).json()["block"]

    pinned_clock.advance(7 * DAY)

    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{agent}", user=owner).status_code == 404
    assert visible(api, owner, ws) == ({person}, {person})
    block = recall(api, ws, admitted(api, ws, owner)).json()["block"]
    assert agent not in block
    assert person in block
    read = api.call("GET", f"/v1/workspaces/{ws}/retention", user=owner).json()
    assert read == {"historyDays": 90, "agentDays": 7}
