"""An agent's verification through `POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify`
(`verify_memory`, decisions/0079): on evidence the service re-checks, through the fence in `auto` only, never on
a pinned entry or a moved head, and every refusal leaves the workspace's items as they were."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import (
    admitted,
    agent_workspace,
    create_entry,
    workspace_items,
)
from tests.support import RUNTIME, Api, admission_headers

pytestmark = pytest.mark.integration

DOCUMENT = "# Team memory\n- We deploy on Fridays\n"


def evidence(ref: str = "1", text: str = DOCUMENT) -> dict[str, str]:
    """A cited document version, with the SHA-256 of the text the agent read."""
    return {"kind": "document-version", "ref": ref, "sha256": hashlib.sha256(text.encode()).hexdigest()}


def verify(api: Api, ws: str, admission: dict[str, Any], entry_id: str, body: dict[str, Any]) -> requests.Response:
    path = f"/v1/automation/workspaces/{ws}/entries/{entry_id}/verify"
    return api.call("POST", path, automation=RUNTIME, json=body, headers=admission_headers(admission))


def scene(api: Api, mode: str = "auto") -> tuple[str, str, str, dict[str, Any]]:
    """A workspace in `mode` with a saved document (version 1), an entry, and an admission of its owner."""
    owner, ws = agent_workspace(api, mode)
    assert api.save(owner, ws, DOCUMENT, 0).status_code == 200
    entry_id = create_entry(api, owner, ws, "Deploys")
    return owner, ws, entry_id, admitted(api, ws, owner)


def read_entry(api: Api, owner: str, ws: str, entry_id: str) -> dict[str, Any]:
    response = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_an_agent_verifies_on_evidence_that_still_holds_and_a_person_replaces_it(api: Api) -> None:
    owner, ws, entry_id, admission = scene(api)

    verified = verify(api, ws, admission, entry_id, {"revision": 1, "evidence": [evidence()]})

    assert verified.status_code == 200, verified.text
    assert verified.json() == {"outcome": "committed", "entryId": entry_id, "revision": 1}
    entry = read_entry(api, owner, ws, entry_id)
    assert (entry["verifiedBy"], entry["verifiedEvidence"]) == (owner, 1)
    by_person = api.call(
        "POST", f"/v1/workspaces/{ws}/entries/{entry_id}/verify", user=owner, headers={"X-Base-Revision": "1"}
    )
    assert by_person.status_code == 200, by_person.text
    assert "verifiedEvidence" not in read_entry(api, owner, ws, entry_id)  # a person vouched: no agent's count


@pytest.mark.parametrize(
    ("proof", "states"),
    [
        (evidence(text="# Team memory\n- We deploy on Mondays\n"), ["changed"]),
        (evidence(ref="7"), ["hidden"]),
        (evidence(ref="not-a-version"), ["hidden"]),
    ],
    ids=["changed", "missing version", "bad ref"],
)
def test_evidence_that_no_longer_holds_is_409_and_changes_nothing(
    api: Api, resources: LocalResources, proof: dict[str, str], states: list[str]
) -> None:
    _, ws, entry_id, admission = scene(api)
    before = workspace_items(resources, ws)

    refused = verify(api, ws, admission, entry_id, {"revision": 1, "evidence": [evidence(), proof]})

    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "EVIDENCE_NOT_CURRENT"
    assert refused.json()["states"] == ["ok", *states]
    assert workspace_items(resources, ws) == before


def test_a_moved_head_and_a_pin_refuse_it_and_change_nothing(api: Api, resources: LocalResources) -> None:
    owner, ws, entry_id, admission = scene(api)
    before = workspace_items(resources, ws)
    stale = verify(api, ws, admission, entry_id, {"revision": 2, "evidence": [evidence()]})
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "STALE_REVISION")
    assert workspace_items(resources, ws) == before
    pin = api.call("PUT", f"/v1/workspaces/{ws}/entries/{entry_id}/pin", user=owner, headers={"X-Base-Revision": "1"})
    assert pin.status_code == 200, pin.text
    pinned = workspace_items(resources, ws)

    refused = verify(api, ws, admission, entry_id, {"revision": 1, "evidence": [evidence()]})

    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "ENTRY_PINNED")
    assert workspace_items(resources, ws) == pinned


@pytest.mark.parametrize(
    ("mode", "answer"), [("read_only", {"outcome": "refused", "predicate": "policy"}), ("off", {"outcome": "noop"})]
)
def test_read_only_refuses_and_off_does_nothing(
    api: Api, resources: LocalResources, mode: str, answer: dict[str, str]
) -> None:
    _, ws, entry_id, admission = scene(api, mode)
    before = workspace_items(resources, ws)

    response = verify(api, ws, admission, entry_id, {"revision": 1, "evidence": [evidence()]})

    assert response.status_code == 200, response.text
    assert response.json() == answer
    assert workspace_items(resources, ws) == before


@pytest.mark.parametrize(
    "body",
    [
        {"revision": 1, "evidence": []},
        {"revision": 1, "evidence": [evidence()] * 6},
        {"revision": 0, "evidence": [evidence()]},
        {"revision": 1},
        {"revision": 1, "evidence": [{"kind": "page", "ref": "1", "sha256": "0" * 64}]},
        {"revision": 1, "evidence": [evidence()], "by": "someone"},
    ],
    ids=["no evidence", "six", "revision 0", "no evidence field", "unknown kind", "unknown field"],
)
def test_bad_input_is_400_and_changes_nothing(api: Api, resources: LocalResources, body: dict[str, Any]) -> None:
    _, ws, entry_id, admission = scene(api)
    before = workspace_items(resources, ws)

    refused = verify(api, ws, admission, entry_id, body)

    assert refused.status_code == 400, refused.text
    assert workspace_items(resources, ws) == before
