"""The agent's entry routes over HTTP, through the local gateway, the real handlers and the moto server: the
agent write rate at its real size (120 an hour), and `forget_memory` as a proposal a human decides."""

from __future__ import annotations

import math
import time
import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.test_automation_api import RUNTIME, admission_headers, admit
from tests.support import Api, new_user, scan_all
from workspace_memory import bootstrap, keys
from workspace_memory.clock import ManualClock
from workspace_memory.entries import AGENT_WRITES_PER_HOUR

pytestmark = pytest.mark.integration


@pytest.fixture
def pinned_clock(stack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The handlers' entry services on a clock that stands still (restored after the test): every write of the
    test falls in one clock hour of the rate limit, however long the test takes and whenever it runs."""
    clock = ManualClock(time.time())
    served = bootstrap.services()
    monkeypatch.setattr(served.entries, "_clock", clock)
    monkeypatch.setattr(served.agent_entries, "_clock", clock)
    return clock


def agent_workspace(api: Api, mode: str) -> tuple[str, str]:
    """A workspace with AI on in `mode` (its owner and id)."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    if mode != "read_only":  # the default policy
        policy = api.call(
            "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": mode, "expectedRevision": 0}
        )
        assert policy.status_code == 200, policy.text
    return owner, ws


def admitted(api: Api, ws: str, user: str) -> dict[str, Any]:
    """An automation admission for `user` under a key session of theirs (a new conversation)."""
    key_session = api.key_session(user, ws)
    response = admit(api, f"conv-{uuid.uuid4().hex[:8]}", ws, user, uuid.uuid4().hex, key_session)
    assert response.status_code == 201, response.text
    admission: dict[str, Any] = response.json()
    return admission


def agent_save(api: Api, ws: str, admission: dict[str, Any], key: str, **fields: Any) -> Any:
    body = {"type": "fact", "title": "Deploys", "summary": "deploy day", "body": "Fridays", **fields}
    headers = {**admission_headers(admission), "Idempotency-Key": key}
    return api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)


def workspace_items(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    """Every item of the workspace's partition, in wire form, sorted: what a request may have changed."""
    pk = keys.ws(ws)
    return sorted((i for i in scan_all(resources) if i["pk"]["S"] == pk), key=lambda i: str(i["sk"]["S"]))


# -- the agent write rate at its real size -------------------------------------------------------------------


def test_the_121st_agent_write_in_the_hour_is_429_and_changes_nothing(
    api: Api, resources: LocalResources, pinned_clock: ManualClock
) -> None:
    """120 agent writes through `PUT /v1/automation/workspaces/{ws}/entries` commit; the 121st in the same
    clock hour is 429 `RATE_LIMITED` with `Retry-After` (seconds to the next hour) and writes nothing."""
    assert AGENT_WRITES_PER_HOUR == 120
    owner, ws = agent_workspace(api, "auto")
    admission = admitted(api, ws, owner)
    for n in range(AGENT_WRITES_PER_HOUR):
        saved = agent_save(api, ws, admission, f"write-{n}", title=f"Entry {n}")
        assert saved.status_code == 200, (n, saved.text)
        assert saved.json()["outcome"] == "committed", (n, saved.json())
    before = workspace_items(resources, ws)

    limited = agent_save(api, ws, admission, "write-120", title="One too many")

    assert limited.status_code == 429, limited.text
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    now = pinned_clock.now()
    to_next_hour = max(math.ceil((int(now // 3600) + 1) * 3600 - now), 1)
    assert int(limited.headers["Retry-After"]) == to_next_hour
    assert limited.json()["retryAfter"] == to_next_hour
    assert workspace_items(resources, ws) == before
