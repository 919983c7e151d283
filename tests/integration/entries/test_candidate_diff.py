"""Issue 17 finding 6: people decided candidates blind (decision 0053). A `read_only` agent proposed an entry
under an existing human rule's key and title; the listing showed title and summary only, `entryId` null, and
accepting silently replaced the rule's body. Over HTTP through the local gateway, the real handlers and the moto
server: the listing shows everything accepting would store and the revision it would supersede with a diff, and
accepting once that revision is no longer current is 409 `STALE_REVISION` and changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import (
    admitted,
    agent_workspace,
    candidates,
    decide,
    workspace_items,
)
from tests.support import RUNTIME, Api, admission_headers

pytestmark = pytest.mark.integration

KEY = "style/tone"
HUMAN_BODY = "Be formal.\nNo emoji."
AGENT_BODY = "Be casual.\nNo emoji."


def human_rule(api: Api, owner: str, ws: str) -> str:
    body = {"scope": "workspace", "type": "rule", "key": KEY, "title": "Tone", "summary": "formal", "body": HUMAN_BODY}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def propose_over_the_key(api: Api, ws: str, owner: str) -> str:
    """The agent reuses the rule's key and title, as a fact (no quote needed), with another body."""
    body = {"type": "fact", "key": KEY, "title": "Tone", "summary": "casual", "body": AGENT_BODY}
    headers = {**admission_headers(admitted(api, ws, owner)), "Idempotency-Key": uuid.uuid4().hex}
    saved = api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)
    assert saved.status_code == 200, saved.text
    assert saved.json()["outcome"] == "proposal"
    candidate_id: str = saved.json()["candidateId"]
    return candidate_id


def test_a_candidate_reusing_a_human_rules_key_shows_the_rule_it_supersedes_and_the_diff(api: Api) -> None:
    owner, ws = agent_workspace(api, "read_only")
    entry_id = human_rule(api, owner, ws)

    candidate_id = propose_over_the_key(api, ws, owner)

    (listed,) = candidates(api, owner, ws)
    assert listed["candidateId"] == candidate_id
    assert (listed["entryId"], listed["baseRevision"]) == (entry_id, 1)
    assert (listed["type"], listed["key"], listed["title"], listed["summary"], listed["body"], listed["sources"]) == (
        "fact",
        KEY,
        "Tone",
        "casual",
        AGENT_BODY,
        [],
    )
    diff: dict[str, Any] = listed["diff"]
    assert (diff["entryId"], diff["revision"], diff["current"]) == (entry_id, 1, True)
    assert (diff["type"], diff["title"], diff["summary"], diff["body"]) == ("rule", "Tone", "formal", HUMAN_BODY)
    assert diff["changed"] == ["type", "summary", "body"]
    assert diff["bodyDiff"].splitlines() == [
        f"--- {entry_id}@1",
        "+++ candidate",
        "@@ -1,2 +1,2 @@",
        "-Be formal.",
        "+Be casual.",
        " No emoji.",
    ]


def test_a_new_entry_candidate_has_no_diff(api: Api) -> None:
    owner, ws = agent_workspace(api, "read_only")
    propose_over_the_key(api, ws, owner)

    (listed,) = candidates(api, owner, ws)

    assert (listed["entryId"], listed["baseRevision"], listed["diff"], listed["body"]) == (None, None, None, AGENT_BODY)


@pytest.mark.parametrize("meanwhile", ["rule superseded", "key taken"])
def test_accepting_a_candidate_whose_target_moved_on_is_stale_and_changes_nothing(
    api: Api, resources: LocalResources, meanwhile: str
) -> None:
    """The rule got a new revision after the candidate was made, or the key was free then and a person used it
    since: accepting would overwrite text the candidate never showed."""
    owner, ws = agent_workspace(api, "read_only")
    if meanwhile == "rule superseded":
        entry_id = human_rule(api, owner, ws)
        candidate_id = propose_over_the_key(api, ws, owner)
        body = {"type": "rule", "title": "Tone", "summary": "very formal", "body": HUMAN_BODY}
        path = f"/v1/workspaces/{ws}/entries/{entry_id}"
        moved = api.call("PUT", path, user=owner, json=body, headers={"X-Base-Revision": "1"})
        assert moved.status_code == 200, moved.text
        current = 2
        (listed,) = candidates(api, owner, ws)
        assert (listed["diff"]["revision"], listed["diff"]["current"]) == (1, False)
    else:
        candidate_id = propose_over_the_key(api, ws, owner)
        entry_id = human_rule(api, owner, ws)
        current = 1
    before = workspace_items(resources, ws)

    accepted = decide(api, owner, ws, candidate_id, "accept")

    assert accepted.status_code == 409, accepted.text
    assert (accepted.json()["error"]["code"], accepted.json()["currentRevision"]) == ("STALE_REVISION", current)
    assert workspace_items(resources, ws) == before
    rule = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (rule["type"], rule["body"], rule["revision"]) == ("rule", HUMAN_BODY, current)
