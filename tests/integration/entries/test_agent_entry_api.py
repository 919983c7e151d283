"""The agent's entry routes over HTTP, through the local gateway, the real handlers and the moto server: the
agent write rate at its real size (120 an hour), and `forget_memory` as a proposal a human decides."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest
import requests

from scripts.localstack.local_clock import PinnedClock
from scripts.localstack.resources import LocalResources
from scripts.localstack.stack import LocalStack
from tests.integration.document.test_races import run_together
from tests.support import ALL_SCOPE_NAMES, RUNTIME, Api, admission_headers, new_user, scan_all
from workspace_memory.entries.limits import AGENT_WRITES_PER_HOUR
from workspace_memory.store import keys

pytestmark = pytest.mark.integration


@pytest.fixture
def pinned_clock(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    """The stack's clock standing still for the test (its functions run in processes of their own and read the
    stack's clock file): every write of the test falls in one clock hour of the rate limit, however long the
    test takes and whenever it runs."""
    with local_stack.pinned_clock(time.time()) as clock:
        yield clock


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


def admitted(api: Api, ws: str, user: str, key_session: str | None = None) -> dict[str, Any]:
    """An automation admission for `user` under a key session of theirs (a new one unless given), in a new
    conversation."""
    key_session = key_session or api.key_session(user, ws)
    response = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, user, key_session, key=uuid.uuid4().hex)
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


@pytest.fixture
def pinned_before_the_hour(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    """The stack's clock standing 30 seconds before the last clock hour ended, for the test to move."""
    with local_stack.pinned_clock(time.time() // 3600 * 3600 - 30) as clock:
        yield clock


def test_the_121st_agent_write_in_any_hour_is_429_and_changes_nothing(
    api: Api, resources: LocalResources, pinned_before_the_hour: PinnedClock
) -> None:
    """120 agent writes through `PUT /v1/automation/workspaces/{ws}/entries` in the last 30 seconds of a clock
    hour commit; the 121st, a minute later in the next clock hour, is 429 `RATE_LIMITED` with `Retry-After` (the
    seconds until the first of them is an hour old) and writes nothing. A clock-hour bucket would have let it
    through. When that hour has passed, the next write commits."""
    assert AGENT_WRITES_PER_HOUR == 120
    clock = pinned_before_the_hour
    owner, ws = agent_workspace(api, "auto")
    two_hours = {"scopes": list(ALL_SCOPE_NAMES), "ttlSeconds": 7200}  # the key session outlives the test's hour
    opened = api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=owner, json=two_hours)
    assert opened.status_code == 201, opened.text
    key_session: str = opened.json()["keySessionId"]
    admission = admitted(api, ws, owner, key_session)
    for n in range(AGENT_WRITES_PER_HOUR):
        saved = agent_save(api, ws, admission, f"write-{n}", title=f"Entry {n}")
        assert saved.status_code == 200, (n, saved.text)
        assert saved.json()["outcome"] == "committed", (n, saved.json())
    clock.advance(60)
    before = workspace_items(resources, ws)

    limited = agent_save(api, ws, admission, "write-120", title="One too many")

    assert limited.status_code == 429, limited.text
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited.headers["Retry-After"]) == limited.json()["retryAfter"] == 3600 - 60
    assert workspace_items(resources, ws) == before
    elsewhere = agent_save(api, ws, admitted(api, ws, owner), "other-session", title="Another key session")
    assert (elsewhere.status_code, elsewhere.json().get("outcome")) == (200, "committed"), elsewhere.text
    clock.advance(3600 - 60)
    again = admitted(api, ws, owner, key_session)  # the same key session, a turn an hour later
    saved = agent_save(api, ws, again, "write-121", title="An hour later")
    assert (saved.status_code, saved.json().get("outcome")) == (200, "committed"), saved.text


BURST = AGENT_WRITES_PER_HOUR + 20
BURST_ADMISSIONS = 4


def test_a_burst_of_agent_writes_commits_exactly_as_many_as_it_stores(
    api: Api, resources: LocalResources, pinned_clock: PinnedClock
) -> None:
    """140 agent writes at once over 4 admissions of one user under one key session, in one hour: exactly the
    120 the limit allows answer `committed`, exactly those are stored, and the other 20 answer 429 `RATE_LIMITED`. Every
    write runs in an execution environment of its own while it runs, so no answer is another request's."""
    owner, ws = agent_workspace(api, "auto")
    key_session = api.key_session(owner, ws)
    admissions = [admitted(api, ws, owner, key_session) for _ in range(BURST_ADMISSIONS)]
    writes: list[Callable[[], requests.Response]] = [
        partial(agent_save, api, ws, admissions[n % BURST_ADMISSIONS], f"burst-{n}", title=f"Burst {n}")
        for n in range(BURST)
    ]

    answers = run_together(writes)

    committed = [a for a in answers if a.status_code == 200 and a.json().get("outcome") == "committed"]
    limited = [a for a in answers if a.status_code == 429 and a.json()["error"]["code"] == "RATE_LIMITED"]
    stored = [i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith("ENTRY#")]
    assert (len(committed), len(stored), len(limited)) == (AGENT_WRITES_PER_HOUR, AGENT_WRITES_PER_HOUR, 20), [
        (a.status_code, a.text[:120]) for a in answers if a not in committed and a not in limited
    ]
    assert {a.json()["entryId"] for a in committed} == {i["sk"]["S"].removeprefix("ENTRY#") for i in stored}


# -- forget_memory: a proposal; humans forget ----------------------------------------------------------------


def create_entry(api: Api, user: str, ws: str, title: str, **extra: Any) -> str:
    body = {"scope": "workspace", "type": "fact", "title": title, "summary": f"{title} summary", "body": title}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json={**body, **extra})
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def supersede(api: Api, user: str, ws: str, entry_id: str, base: int, title: str) -> None:
    body = {"type": "fact", "title": title, "summary": f"{title} summary", "body": title}
    path = f"/v1/workspaces/{ws}/entries/{entry_id}"
    response = api.call("PUT", path, user=user, json=body, headers={"X-Base-Revision": str(base)})
    assert response.status_code == 200, response.text


def propose_forget(api: Api, ws: str, admission: dict[str, Any], entry_id: str, key: str = "forget-1") -> Any:
    headers = {**admission_headers(admission), "Idempotency-Key": key}
    path = f"/v1/automation/workspaces/{ws}/entries/{entry_id}/forget"
    return api.call("POST", path, automation=RUNTIME, headers=headers)


def candidates(api: Api, user: str, ws: str) -> list[dict[str, Any]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/candidates", user=user)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["candidates"]
    return found


def decide(api: Api, user: str, ws: str, candidate_id: str, verb: str) -> Any:
    path = f"/v1/workspaces/{ws}/candidates/{candidate_id}/{verb}"
    return api.call("POST", path, user=user, json={"revision": 1})


def chain_items(resources: LocalResources, ws: str, entry_id: str) -> list[dict[str, Any]]:
    """The chain's head and revision items, in wire form."""
    return [
        i
        for i in workspace_items(resources, ws)
        if i["sk"]["S"] == f"ENTRY#{entry_id}" or i["sk"]["S"].startswith(f"ENTRYREV#{entry_id}#")
    ]


def marker() -> str:
    return f"mk{uuid.uuid4().hex[:12]}"


@pytest.mark.parametrize("mode", ["auto", "read_only"])
def test_a_forget_proposal_accepted_forgets_every_revision_as_delete_does(
    api: Api, resources: LocalResources, mode: str
) -> None:
    owner, ws = agent_workspace(api, mode)
    first, second = marker(), marker()
    entry_id = create_entry(api, owner, ws, first, key="deploy/day")
    supersede(api, owner, ws, entry_id, 1, second)
    admission = admitted(api, ws, owner)

    proposed = propose_forget(api, ws, admission, entry_id)

    assert proposed.status_code == 200, proposed.text
    answer = proposed.json()
    assert (answer["outcome"], answer["entryId"]) == ("proposal", entry_id)
    # A retry of the tool call (same key) is the same proposal, not a second one.
    again = propose_forget(api, ws, admission, entry_id)
    assert (again.json()["candidateId"], again.json()["replayed"]) == (answer["candidateId"], True)
    (listed,) = candidates(api, owner, ws)
    assert (listed["candidateId"], listed["kind"], listed["entryId"], listed["baseRevision"]) == (
        answer["candidateId"],
        "forget",
        entry_id,
        2,
    )
    assert listed["title"] == second  # read live from the revision it names, for the person deciding
    candidate_item = next(i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith("ENTRYCAND#"))
    assert "ciphertext" not in candidate_item
    # A proposal forgets nothing: the entry reads as before.
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()["title"] == second

    accepted = decide(api, owner, ws, answer["candidateId"], "accept")

    assert accepted.status_code == 200, accepted.text
    assert accepted.json() == {"entryId": entry_id, "revision": 2, "forgotten": True}
    gone = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner)
    assert (gone.status_code, gone.json()["error"]["code"]) == (410, "ENTRY_FORGOTTEN")
    items = workspace_items(resources, ws)
    assert not [i for i in items if i["sk"]["S"].startswith(f"ENTRYREV#{entry_id}#")]  # every revision
    assert not [i for i in items if i["sk"]["S"].startswith("ENTRYKEY#")]  # its key is free again
    (tombstone,) = chain_items(resources, ws, entry_id)
    # Exactly the tombstone `DELETE …/entries/{id}` leaves: ids, scope and times, no text.
    deleted = create_entry(api, owner, ws, marker())
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{deleted}", user=owner).status_code == 204
    (deleted_tombstone,) = chain_items(resources, ws, deleted)
    assert sorted(tombstone) == sorted(deleted_tombstone)
    assert tombstone["status"]["S"] == "forgotten"
    assert tombstone["forgottenBy"]["S"] == owner
    assert candidates(api, owner, ws) == []


def test_a_forget_proposal_rejected_leaves_the_entry_intact(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    entry_id = create_entry(api, owner, ws, marker())
    before = chain_items(resources, ws, entry_id)
    proposed = propose_forget(api, ws, admitted(api, ws, owner), entry_id).json()

    rejected = decide(api, owner, ws, proposed["candidateId"], "reject")

    assert rejected.status_code == 204, rejected.text
    assert chain_items(resources, ws, entry_id) == before
    assert candidates(api, owner, ws) == []
    late = decide(api, owner, ws, proposed["candidateId"], "accept")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "STALE_REVISION")  # decided already
    assert chain_items(resources, ws, entry_id) == before
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).status_code == 200


@pytest.mark.parametrize("meanwhile", ["superseded", "forgotten"])
def test_accepting_a_stale_forget_proposal_changes_nothing(api: Api, resources: LocalResources, meanwhile: str) -> None:
    """The proposal named revision 1; the entry moved on (or was forgotten by a human, which closed the proposal)
    before the decision."""
    owner, ws = agent_workspace(api, "read_only")
    entry_id = create_entry(api, owner, ws, marker())
    proposed = propose_forget(api, ws, admitted(api, ws, owner), entry_id).json()
    if meanwhile == "superseded":
        supersede(api, owner, ws, entry_id, 1, marker())
    else:
        assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).status_code == 204
    before = workspace_items(resources, ws)

    accepted = decide(api, owner, ws, proposed["candidateId"], "accept")

    # superseded: the head moved on; forgotten: the human's forget closed the proposal (decisions/0074)
    assert accepted.status_code == 409, accepted.text
    assert (accepted.json()["error"]["code"], accepted.json()["currentRevision"]) == ("STALE_REVISION", 2)
    assert workspace_items(resources, ws) == before  # the candidate as it was, the chain as it was
    still = [] if meanwhile == "forgotten" else [proposed["candidateId"]]
    assert [c["candidateId"] for c in candidates(api, owner, ws)] == still


def test_forget_memory_in_off_does_nothing(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    entry_id = create_entry(api, owner, ws, marker())
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "off", "expectedRevision": 1}
    )
    assert policy.status_code == 200, policy.text
    admission = admitted(api, ws, owner)
    before = workspace_items(resources, ws)

    proposed = propose_forget(api, ws, admission, entry_id)

    assert proposed.status_code == 200, proposed.text
    assert proposed.json() == {"outcome": "noop"}
    assert workspace_items(resources, ws) == before
    assert candidates(api, owner, ws) == []


def test_another_members_private_entry_is_not_found_like_a_missing_one(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    editor = new_user("editor")
    api.add_member(owner, ws, editor, "editor")
    private = create_entry(api, editor, ws, marker(), scope="member")
    admission = admitted(api, ws, owner)
    before = workspace_items(resources, ws)

    foreign = propose_forget(api, ws, admission, private, key="f-1")
    missing = propose_forget(api, ws, admission, "en_" + "0" * 24, key="f-2")

    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "ENTRY_NOT_FOUND")
    assert foreign.json() == missing.json()
    assert workspace_items(resources, ws) == before
    assert candidates(api, editor, ws) == []
