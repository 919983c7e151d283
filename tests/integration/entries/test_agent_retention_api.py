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
from tests.support import RUNTIME, Api, admission_headers

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


def test_a_shorter_window_rewrites_the_stamped_expiry_and_frees_the_key(api: Api, pinned_clock: PinnedClock) -> None:
    """Against DynamoDB's own condition expressions: the window change rewrites the head and revision `ttl`
    (`ExpireAgentEntry`), and a person's write under the expired memory's key takes the slot over
    (`TakeKeySlot`) as a new chain."""
    owner, ws = agent_workspace(api, "auto")
    body = {"type": "fact", "title": "Deploys", "summary": "deploy day", "body": "Fridays", "key": "ops/deploys"}
    headers = {**admission_headers(admitted(api, ws, owner)), "Idempotency-Key": uuid.uuid4().hex}
    saved = api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)
    assert saved.status_code == 200, saved.text
    agent = saved.json()["entryId"]
    window = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"agentDays": 3})
    assert window.status_code == 200, window.text
    pinned_clock.advance(2 * DAY)
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{agent}", user=owner).status_code == 200
    pinned_clock.advance(DAY)
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{agent}", user=owner).status_code == 404
    taken = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=entry(key="ops/deploys"))
    assert taken.status_code == 201, taken.text
    assert taken.json()["entryId"] != agent
    again = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=entry(key="ops/deploys"))
    assert (again.status_code, again.json()["entryId"]) == (200, taken.json()["entryId"])  # supersedes it
