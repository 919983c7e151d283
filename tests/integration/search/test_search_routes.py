"""`GET /v1/workspaces/{ws}/search` through the local gateway against the moto server with real encryption:
the shape of docs/architecture.md#search-routes, any member may search, another member's private entries never surface
(a marker), and bad input gets a stable code and writes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.support import Api, item_bytes, new_user, scan_all

pytestmark = pytest.mark.integration


def entry(title: str, summary: str, **extra: Any) -> dict[str, Any]:
    return {"scope": "workspace", "type": "fact", "title": title, "summary": summary, "body": "", **extra}


def create(api: Api, user: str, ws: str, body: dict[str, Any]) -> str:
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def search(api: Api, user: str, ws: str, query: str) -> Any:
    return api.call("GET", f"/v1/workspaces/{ws}/search?{query}", user=user)


def stored(resources: Any, ws: str) -> list[bytes]:
    return sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))


def test_search_answers_the_design_shape_for_any_member_and_nobody_else(api: Api, resources: Any) -> None:
    owner, viewer, stranger = new_user("owner"), new_user("viewer"), new_user("stranger")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    deploy = create(api, owner, ws, entry("Deploy window", "production releases happen on Tuesdays"))
    create(api, owner, ws, entry("Invoices", "the customer is billed in euros each month"))
    rule = create(api, owner, ws, {**entry("Release rule", "never release on Fridays"), "type": "rule"})
    before = stored(resources, ws)
    answer = search(api, viewer, ws, "q=when+do+we+release&k=2")
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert len(results) == 2
    assert all(set(r) == {"entryId", "revision", "title", "summary", "score"} for r in results)
    assert {r["entryId"] for r in results} == {deploy, rule}
    assert results[0]["score"] >= results[1]["score"]
    top = search(api, owner, ws, "q=Tuesdays").json()["results"][0]
    assert top == {**top, "entryId": deploy, "revision": 1, "title": "Deploy window"}
    only_rules = search(api, owner, ws, "q=release&type=rule").json()["results"]
    assert [r["entryId"] for r in only_rules] == [rule]
    assert search(api, owner, ws, "q=kubernetes+helm+chart").json() == {"results": [], "hidden": 0}
    refused = search(api, stranger, ws, "q=Tuesdays")
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    assert stored(resources, ws) == before  # a search writes nothing


def test_a_members_private_entry_never_surfaces_for_another_member(api: Api) -> None:
    alice, bob = new_user("alice"), new_user("bob")
    ws = api.workspace(alice)
    api.add_member(alice, ws, bob, "editor")
    marker = f"zq{uuid.uuid4().hex[:12]}"
    create(api, alice, ws, entry("Deploy notes", "how we deploy releases"))
    private = create(
        api, bob, ws, entry(f"My {marker} notes", f"{marker} I deploy releases late", scope="member", body=marker)
    )
    for query in (f"q={marker}", "q=deploy+releases&k=20", "q=my+notes&k=20", f"q={marker}&scope=member&k=20"):
        answer = search(api, alice, ws, query)
        assert answer.status_code == 200, answer.text
        assert private not in answer.text
        assert marker not in answer.text
    mine = search(api, bob, ws, f"q={marker}").json()["results"]
    assert [r["entryId"] for r in mine][:1] == [private]  # first: a random marker may sit near another vector


BAD: list[tuple[str, str, str]] = [
    ("no query", "k=3", "INVALID_REQUEST"),
    ("empty query", "q=", "INVALID_REQUEST"),
    ("blank query", "q=%20%20", "INVALID_REQUEST"),
    ("2 KiB query", "q=" + "a" * 2048, "INVALID_REQUEST"),
    ("1,024 characters but 2 KiB of UTF-8", "q=" + "%C3%A9" * 1024, "INVALID_REQUEST"),
    ("k of 0", "q=deploy&k=0", "INVALID_REQUEST"),
    ("k of 21", "q=deploy&k=21", "INVALID_REQUEST"),
    ("k not an integer", "q=deploy&k=three", "INVALID_REQUEST"),
    ("k a fraction", "q=deploy&k=2.5", "INVALID_REQUEST"),
    ("unknown filter", "q=deploy&colour=red", "UNKNOWN_PARAMETER"),
    ("misspelt filter", "q=deploy&scpoe=member", "UNKNOWN_PARAMETER"),
    ("unknown scope", "q=deploy&scope=team", "INVALID_REQUEST"),
    ("unknown type", "q=deploy&type=opinion", "INVALID_REQUEST"),
    ("bad asOf", "q=deploy&asOf=yesterday", "INVALID_REQUEST"),
    ("bad key prefix", "q=deploy&keyPrefix=Ops/Deploys", "INVALID_KEY"),
]


@pytest.mark.parametrize(("name", "query", "code"), BAD, ids=[b[0] for b in BAD])
def test_bad_search_input_gets_a_stable_error_and_writes_nothing(
    api: Api, resources: Any, name: str, query: str, code: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    create(api, owner, ws, entry("Deploy window", "releases go out on Tuesdays", key="ops/deploys"))
    before = stored(resources, ws)
    answer = search(api, owner, ws, query)
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, code), name
    assert "colour" not in answer.text
    assert "scpoe" not in answer.text
    assert stored(resources, ws) == before
