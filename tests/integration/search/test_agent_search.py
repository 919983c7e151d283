"""`search_memory`'s route, `GET /v1/automation/workspaces/{ws}/search`, through the local gateway against the
moto server with real encryption: the admission's checks of `read_memory`, member-private entries never found by
another member, stable 400s for bad input with nothing stored changed, and a warm search in one read."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.adapters.test_branch_keys import Calls
from tests.integration.fence_support import make_scene
from tests.support import ALL_SCOPE_NAMES, Api, admission_headers, item_bytes, new_user, scan_all
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryScope, EntryType

pytestmark = pytest.mark.integration

MARKER = f"PRIVATE-{uuid.uuid4().hex}"


def admit(
    api: Api, user: str, ws: str, conv: str | None = None, scopes: Sequence[str] = ALL_SCOPE_NAMES
) -> dict[str, str]:
    """The admission headers of a runtime's turn for `user`, under a key session `user` opened with `scopes` (all
    unless given)."""
    conv = conv or f"conv-{uuid.uuid4().hex[:8]}"
    response = api.admit(conv, ws, user, api.key_session(user, ws, scopes), automation="test")
    assert response.status_code == 201, response.text
    return admission_headers(response.json())


def create(api: Api, user: str, ws: str, title: str, summary: str, scope: str = "workspace") -> str:
    body = {"scope": scope, "type": "fact", "title": title, "summary": summary, "body": ""}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def search(api: Api, ws: str, headers: dict[str, str], query: str | None, **params: Any) -> requests.Response:
    given = {"q": query, **params} if query is not None else params
    return api.call(
        "GET", f"/v1/automation/workspaces/{ws}/search?{urlencode(given)}", automation="test", headers=headers
    )


def error(response: requests.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


@pytest.fixture(scope="module")
def team(api: Api) -> tuple[str, str, str, dict[str, str]]:
    """A shared `auto` workspace: the owner's entries, and Bob's private one holding the marker."""
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0})
    ids = {
        "deploy": create(api, owner, ws, "Deploy window", "production releases happen on Tuesdays"),
        "billing": create(api, owner, ws, "Invoices", "the customer is billed in euros each month"),
        "private": create(api, bob, ws, "My deploy notes", f"{MARKER} I deploy releases late", "member"),
    }
    return owner, bob, ws, ids


def test_search_answers_the_best_entries_the_admissions_user_may_see(
    api: Api, team: tuple[str, str, str, dict[str, str]]
) -> None:
    owner, bob, ws, ids = team
    headers = admit(api, owner, ws)
    response = search(api, ws, headers, "when do releases go out", k=2)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert (response.json()["trust"], response.json()["evidence"]) == ("untrusted", False)  # seed 004's marks
    human = api.call("GET", f"/v1/workspaces/{ws}/search?q=releases", user=owner).json()
    assert "trust" not in human  # a person's own search is not an agent's context
    assert len(results) <= 2
    assert results[0]["entryId"] == ids["deploy"]
    assert set(results[0]) == {"entryId", "revision", "title", "summary", "score"}
    assert (results[0]["revision"], results[0]["title"]) == (1, "Deploy window")
    # Bob's private entry never surfaces for the owner, by its words or by its marker ...
    for query in (MARKER, "deploy releases late", "my deploy notes"):
        found = search(api, ws, headers, query, k=20)
        assert found.status_code == 200, found.text
        assert ids["private"] not in [r["entryId"] for r in found.json()["results"]]
        assert MARKER not in found.text
    # ... while Bob finds it under his own admission.
    mine = search(api, ws, admit(api, bob, ws), MARKER)
    assert ids["private"] in [r["entryId"] for r in mine.json()["results"]]


def test_search_keeps_the_checks_of_read_memory(api: Api, team: tuple[str, str, str, dict[str, str]]) -> None:
    owner, _, ws, _ = team
    assert error(search(api, ws, {}, "deploy")) == (400, "INVALID_REQUEST")  # no admission headers
    notes_only = admit(api, owner, ws, scopes=["notes"])
    assert error(search(api, ws, notes_only, "deploy")) == (403, "SCOPE_NOT_GRANTED")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    older = admit(api, owner, ws, conv)
    assert search(api, ws, older, "deploy").status_code == 200
    admit(api, owner, ws, conv)  # a newer turn of the conversation takes the credential slot
    assert error(search(api, ws, older, "deploy")) == (403, "ADMISSION_RETIRED")


def test_search_is_refused_while_memory_is_off(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    create(api, owner, ws, "Deploy window", "production releases happen on Tuesdays")
    off = api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "off", "expectedRevision": 0})
    assert off.status_code == 200, off.text
    assert error(search(api, ws, admit(api, owner, ws), "deploy")) == (403, "MEMORY_OFF")


BAD = [
    ("no query", None, {}),
    ("empty query", "", {}),
    ("blank query", "   ", {}),
    ("2 KiB query", "é" * 1024, {}),
    ("k of 0", "deploy", {"k": 0}),
    ("k of 21", "deploy", {"k": 21}),
    ("k not a number", "deploy", {"k": "five"}),
    ("unknown filter", "deploy", {"scope": "member"}),
    ("unknown parameter", "deploy", {"limit": 5}),
]


@pytest.mark.parametrize(("case", "query", "params"), BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_a_stable_400_and_changes_nothing(
    api: Api,
    resources: LocalResources,
    team: tuple[str, str, str, dict[str, str]],
    case: str,
    query: str | None,
    params: dict[str, Any],
) -> None:
    owner, _, ws, _ = team
    headers = admit(api, owner, ws)
    before = sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))
    response = search(api, ws, headers, query, **params)
    expected = "UNKNOWN_PARAMETER" if case.startswith("unknown") else "INVALID_REQUEST"
    assert error(response) == (400, expected), case
    assert "é" * 10 not in response.text  # the query is never echoed
    assert sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"])) == before


def test_a_warm_search_reads_the_authority_and_the_counter_in_one_read(settings: Settings) -> None:
    scene = make_scene(settings)
    svc = scene.svc
    for n in range(30):  # more than moto's own limit of 25 items a TransactGetItems: the cold build reads 30
        svc.entries.create(
            scene.owner, scene.ws, Draft(EntryType.FACT, EntryText(f"Runbook {n}", f"failover step {n}", ""))
        )
    svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, EntryText("Mine", MARKER, ""), EntryScope.MEMBER))
    admitted = scene.admit()
    adm, cred = admitted.admission.id, admitted.credential
    svc.agent_entries.search(scene.ws, adm, cred, "failover", 5)  # builds the warm index
    calls = Calls(svc.clients.dynamodb, svc.clients.kms, svc.clients.key_store)
    results = svc.agent_entries.search(scene.ws, adm, cred, "failover", 3).results
    assert len(results) == 3
    assert calls.names() == ["dynamodb.TransactGetItems"]
