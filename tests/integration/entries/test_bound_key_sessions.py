"""Key sessions bound to a context (decisions/0077) through the local gateway, the real handlers and the moto
server: the binding shown when opened and listed, a bad one refused with nothing stored, its key prefixes never in
clear, and everything an agent under it does staying inside: a save, candidate or forget proposal outside is
refused with nothing written, and read_memory, the agent list, search_memory and recall never show an entry
outside. An unbound
session behaves as before."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import agent_workspace, workspace_items
from tests.support import ALL_SCOPE_NAMES, RUNTIME, Api, admission_headers, scan_all
from workspace_memory.turns.recall import SELECTED_HEADING

pytestmark = pytest.mark.integration

BIND = {"scopes": ["workspace"], "types": ["fact"], "keyPrefixes": ["ops/"]}
"""The team's binding: workspace facts whose key starts `ops/`."""


def open_session(api: Api, user: str, ws: str, bind: Any) -> requests.Response:
    body = {"scopes": list(ALL_SCOPE_NAMES), "bind": bind}
    return api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=user, json=body)


def admitted_under(api: Api, ws: str, user: str, key_session: str, message: str | None = None) -> dict[str, Any]:
    extra = {} if message is None else {"message": message}
    response = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, user, key_session, **extra)
    assert response.status_code == 201, response.text
    admission: dict[str, Any] = response.json()
    return admission


def human_entry(api: Api, user: str, ws: str, **fields: Any) -> str:
    body = {"type": "fact", "scope": "workspace", "title": "Releases", "summary": "releases go out", **fields}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def agent_save(api: Api, ws: str, admission: dict[str, Any], **fields: Any) -> requests.Response:
    """`save_memory` under a fresh Idempotency-Key; `fields` override a workspace fact without a key."""
    body = {"type": "fact", "title": "Deploys", "summary": "deploy day", "body": "Fridays", **fields}
    headers = {**admission_headers(admission), "Idempotency-Key": uuid.uuid4().hex}
    return api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)


def error(response: requests.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def automation(api: Api, method: str, path: str, admission: dict[str, Any], **kwargs: Any) -> requests.Response:
    headers = {**admission_headers(admission), **kwargs.pop("headers", {})}
    return api.call(method, path, automation=RUNTIME, headers=headers, **kwargs)


@pytest.fixture(scope="module")
def team(api: Api) -> dict[str, str]:
    """An `auto` workspace with one entry inside the binding and one outside it by each of its fields."""
    owner, ws = agent_workspace(api, "auto")
    ids = {
        "owner": owner,
        "ws": ws,
        "inside": human_entry(api, owner, ws, key="ops/deploys", summary="releases go out on tuesdays"),
        "by_prefix": human_entry(api, owner, ws, key="hr/payroll", summary="releases of payroll monthly"),
        "no_key": human_entry(api, owner, ws, summary="releases train leaves weekly"),
        "by_type": human_entry(api, owner, ws, type="rule", key="ops/freeze", summary="releases freeze in december"),
        "by_scope": human_entry(api, owner, ws, scope="member", key="ops/mine", summary="releases i watch"),
    }
    opened = open_session(api, owner, ws, BIND)
    assert opened.status_code == 201, opened.text
    ids["bound"] = opened.json()["keySessionId"]
    return ids


OUTSIDE = ("by_prefix", "no_key", "by_type", "by_scope")


def test_the_binding_is_shown_when_the_session_is_opened_and_listed(api: Api, team: dict[str, str]) -> None:
    owner, ws = team["owner"], team["ws"]
    opened = open_session(api, owner, ws, {"keyPrefixes": ["ops/db", "ops/", "team/x"], "types": ["rule", "fact"]})
    assert opened.status_code == 201, opened.text
    # a covered prefix adds nothing; an unbound field is left out
    assert opened.json()["bind"] == {"types": ["fact", "rule"], "keyPrefixes": ["ops/", "team/x"]}
    listed = api.call("GET", f"/v1/workspaces/{ws}/key-sessions", user=owner).json()["keySessions"]
    by_id = {s["keySessionId"]: s for s in listed}
    assert by_id[opened.json()["keySessionId"]]["bind"] == {
        "types": ["fact", "rule"],
        "keyPrefixes": ["ops/", "team/x"],
    }
    assert by_id[team["bound"]]["bind"] == BIND
    unbound = api.key_session(owner, ws)
    relisted = api.call("GET", f"/v1/workspaces/{ws}/key-sessions", user=owner).json()["keySessions"]
    assert "bind" not in next(s for s in relisted if s["keySessionId"] == unbound)  # unbound: left out


@pytest.mark.parametrize(
    "bind",
    [
        {},
        {"scopes": []},
        {"keyPrefixes": []},
        {"keyPrefixes": ["a/", "b/", "c/", "d/", "e/"]},
        {"keyPrefixes": ["Ops/"]},
        {"keyPrefixes": ["ops/a/b"]},
        {"keyPrefixes": ["ops/" + "x" * 120]},
    ],
)
def test_a_bad_binding_is_400_and_stores_nothing(
    api: Api, resources: LocalResources, team: dict[str, str], bind: dict[str, Any]
) -> None:
    before = workspace_items(resources, team["ws"])
    response = open_session(api, team["owner"], team["ws"], bind)
    assert error(response) == (400, "INVALID_KEY_SESSION_BINDING"), response.text
    assert workspace_items(resources, team["ws"]) == before


def test_a_binding_of_an_unknown_scope_or_type_is_400_and_stores_nothing(
    api: Api, resources: LocalResources, team: dict[str, str]
) -> None:
    before = workspace_items(resources, team["ws"])
    for bind in ({"scopes": ["everyone"]}, {"types": ["secret"]}, {"keyPrefixes": "ops/"}):
        assert open_session(api, team["owner"], team["ws"], bind).status_code == 400
    assert workspace_items(resources, team["ws"]) == before


def test_the_key_prefixes_are_never_stored_in_clear(api: Api, resources: LocalResources, team: dict[str, str]) -> None:
    prefix = f"clients{uuid.uuid4().hex[:10]}/"
    opened = open_session(api, team["owner"], team["ws"], {"keyPrefixes": [prefix]})
    assert opened.status_code == 201, opened.text
    assert opened.json()["bind"] == {"keyPrefixes": [prefix]}
    table = str(scan_all(resources))
    assert opened.json()["keySessionId"] in table
    assert prefix not in table
    assert prefix.encode() not in b"".join(v["B"] for i in scan_all(resources) for v in i.values() if "B" in v)


@pytest.mark.parametrize(
    "outside",
    [
        {"key": "hr/payroll-day"},  # not under the prefix
        {},  # no key: outside a prefix binding
        {"key": "ops/notes", "scope": "member"},  # not the scope
        {"key": "ops/pref", "type": "preference"},  # not the type
        {"key": "ops/freeze", "body": "no deploys"},  # inside, but supersedes a rule: a type outside
    ],
)
def test_a_save_outside_the_binding_is_refused_and_writes_nothing(
    api: Api, resources: LocalResources, team: dict[str, str], outside: dict[str, Any]
) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], team["bound"])
    before = workspace_items(resources, ws)
    response = agent_save(api, ws, admission, **outside)
    assert error(response) == (403, "OUTSIDE_KEY_SESSION_BINDING"), response.text
    for text in ("payroll-day", "ops/notes", "ops/pref"):
        assert text not in response.text
    assert workspace_items(resources, ws) == before  # no entry, no marker, no rate window


def test_a_save_inside_the_binding_commits(api: Api, team: dict[str, str]) -> None:
    admission = admitted_under(api, team["ws"], team["owner"], team["bound"])
    saved = agent_save(api, team["ws"], admission, key="ops/rollback")
    assert saved.status_code == 200, saved.text
    assert saved.json()["outcome"] == "committed"


def test_a_candidate_outside_the_binding_is_refused_and_writes_nothing(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "read_only")
    session = open_session(api, owner, ws, {"keyPrefixes": ["ops/"]}).json()["keySessionId"]
    admission = admitted_under(api, ws, owner, session)
    before = workspace_items(resources, ws)
    response = agent_save(api, ws, admission, key="hr/payroll")
    assert error(response) == (403, "OUTSIDE_KEY_SESSION_BINDING"), response.text
    assert workspace_items(resources, ws) == before
    inside = agent_save(api, ws, admission, key="ops/deploys")
    assert inside.status_code == 200, inside.text
    assert inside.json()["outcome"] == "proposal"


def test_read_memory_answers_an_entry_outside_as_not_found(api: Api, team: dict[str, str]) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], team["bound"])
    path = f"/v1/automation/workspaces/{ws}/entries"
    assert automation(api, "GET", f"{path}/{team['inside']}", admission).status_code == 200
    missing = automation(api, "GET", f"{path}/ent_{uuid.uuid4().hex}", admission)
    for name in OUTSIDE:
        hidden = automation(api, "GET", f"{path}/{team[name]}", admission)
        assert error(hidden) == (404, "ENTRY_NOT_FOUND"), name
        assert hidden.json() == missing.json()  # the same bytes as a missing entry


def listed(api: Api, ws: str, admission: dict[str, Any], **query: Any) -> dict[str, Any]:
    """The agent list's page (`GET /v1/automation/workspaces/{ws}/entries`) under `admission`."""
    response = automation(api, "GET", f"/v1/automation/workspaces/{ws}/entries?{urlencode(query)}", admission)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def test_the_agent_list_never_shows_an_entry_outside_and_a_key_outside_is_no_entry(
    api: Api, team: dict[str, str]
) -> None:
    """What the MCP server's `list_entries` and its memory tool's key lookups page through: inside the binding
    only, and a lookup of a key outside answers as one no entry has, by each of the binding's fields."""
    ws, owner = team["ws"], team["owner"]
    bound = admitted_under(api, ws, owner, team["bound"])
    unbound = admitted_under(api, ws, owner, api.key_session(owner, ws))
    ids = {row["entryId"] for row in listed(api, ws, bound, limit=100)["entries"]}
    assert team["inside"] in ids
    assert not ids & {team[name] for name in OUTSIDE}
    everything = {row["entryId"] for row in listed(api, ws, unbound, limit=100)["entries"]}
    assert {team[name] for name in ("inside", *OUTSIDE)} <= everything
    assert [r["entryId"] for r in listed(api, ws, bound, key="ops/deploys")["entries"]] == [team["inside"]]
    for key, name in (("hr/payroll", "by_prefix"), ("ops/freeze", "by_type"), ("ops/mine", "by_scope")):
        assert listed(api, ws, bound, key=key) == listed(api, ws, bound, key="zz/none"), key  # as no entry
        assert [r["entryId"] for r in listed(api, ws, unbound, key=key)["entries"]] == [team[name]], key


def test_the_agent_list_hides_an_entry_inside_that_cites_one_outside(api: Api, team: dict[str, str]) -> None:
    """A cited entry outside the binding is as gone as one its user cannot see: the citing entry is left out of
    the bound page and counted as hidden; the unbound page shows it (its citation merely `changed`)."""
    ws, owner = team["ws"], team["owner"]
    cited = {"kind": "entry", "ref": team["by_prefix"], "sha256": hashlib.sha256(b"").hexdigest()}
    citing = human_entry(api, owner, ws, key="ops/cites-payroll", summary="waits for payroll", sources=[cited])
    bound = admitted_under(api, ws, owner, team["bound"])
    unbound = admitted_under(api, ws, owner, api.key_session(owner, ws))
    page = listed(api, ws, bound, key="ops/cites-payroll")
    assert (page["entries"], page["hidden"]) == ([], 1)
    shown = listed(api, ws, unbound, key="ops/cites-payroll")
    assert ([r["entryId"] for r in shown["entries"]], shown["hidden"]) == ([citing], 0)
    assert (page["trust"], page["evidence"]) == ("untrusted", False)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("scope=member", "UNKNOWN_PARAMETER"),
        ("key=Ops%2FDeploys", "INVALID_KEY"),
        ("limit=0", "INVALID_REQUEST"),
        ("limit=101", "INVALID_REQUEST"),
        ("cursor=not-a-cursor", "INVALID_REQUEST"),
    ],
)
def test_bad_input_to_the_agent_list_is_400_and_changes_nothing(
    api: Api, resources: LocalResources, team: dict[str, str], query: str, code: str
) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], team["bound"])
    before = workspace_items(resources, ws)
    response = automation(api, "GET", f"/v1/automation/workspaces/{ws}/entries?{query}", admission)
    assert error(response) == (400, code), response.text
    assert workspace_items(resources, ws) == before


def test_search_and_recall_never_show_an_entry_outside(api: Api, team: dict[str, str]) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], team["bound"], message="when do releases go out")
    query = urlencode({"q": "releases", "k": 20})
    found = automation(api, "GET", f"/v1/automation/workspaces/{ws}/search?{query}", admission)
    assert found.status_code == 200, found.text
    ids = {r["entryId"] for r in found.json()["results"]}
    assert team["inside"] in ids
    assert not ids & {team[name] for name in OUTSIDE}
    recall = automation(api, "GET", f"/v1/automation/workspaces/{ws}/memory?purpose=recall", admission)
    assert recall.status_code == 200, recall.text
    block = recall.json()["block"]
    assert team["inside"] in block
    for name in OUTSIDE:  # not in the index, the rules or the selection
        assert team[name] not in block, name
    assert "freeze in december" not in block


def test_recall_leaves_out_an_entry_inside_that_cites_one_outside(api: Api, team: dict[str, str]) -> None:
    """What an entry cites is judged within the binding too: for the bound session, a cited entry outside it is
    as gone as one its user cannot see, so recall's index leaves the entry citing it out; an unbound session's
    index shows it. (The turn's message matches nothing, so no selective recall adds lines: the next test has
    search and the selection.)"""
    ws, owner = team["ws"], team["owner"]
    cited = {"kind": "entry", "ref": team["by_prefix"], "sha256": hashlib.sha256(b"").hexdigest()}
    citing = human_entry(api, owner, ws, key="ops/payroll-note", summary="releases wait for payroll", sources=[cited])
    bound = admitted_under(api, ws, owner, team["bound"], message="zzqx")
    unbound = admitted_under(api, ws, owner, api.key_session(owner, ws), message="zzqx")
    path = f"/v1/automation/workspaces/{ws}/memory?purpose=recall"

    sessions = {"bound": bound, "unbound": unbound}
    blocks = {name: automation(api, "GET", path, adm).json()["block"] for name, adm in sessions.items()}

    assert citing not in blocks["bound"]
    assert team["inside"] in blocks["bound"]
    assert citing in blocks["unbound"]


def test_search_and_selective_recall_leave_out_an_entry_inside_that_cites_one_outside(api: Api) -> None:
    """Search's hits are judged within the binding as recall's index is (decisions/0081): for the bound session,
    `search_memory` leaves out the entry inside that cites one outside and counts it (`hidden`), and the turn's
    selection does not hand it to the model; an unbound session finds it, its citation `ok`."""
    owner, ws = agent_workspace(api, "auto")
    outside = human_entry(api, owner, ws, key="hr/payroll", summary="payroll runs monthly")
    cited = {"kind": "entry", "ref": outside, "sha256": hashlib.sha256(b"").hexdigest()}
    citing = human_entry(api, owner, ws, key="ops/rollbacks", summary="rollbacks wait for payroll", sources=[cited])
    inside = human_entry(api, owner, ws, key="ops/rollback-window", summary="rollbacks go out on tuesdays")
    opened = open_session(api, owner, ws, BIND)
    assert opened.status_code == 201, opened.text
    message = "when do rollbacks go out"
    sessions = {
        "bound": admitted_under(api, ws, owner, opened.json()["keySessionId"], message=message),
        "unbound": admitted_under(api, ws, owner, api.key_session(owner, ws), message=message),
    }
    query = urlencode({"q": "rollbacks", "k": 20})
    found = {
        name: automation(api, "GET", f"/v1/automation/workspaces/{ws}/search?{query}", adm).json()
        for name, adm in sessions.items()
    }
    recall = f"/v1/automation/workspaces/{ws}/memory?purpose=recall"
    blocks = {name: automation(api, "GET", recall, adm).json()["block"] for name, adm in sessions.items()}

    assert [r["entryId"] for r in found["bound"]["results"]] == [inside]
    assert found["bound"]["hidden"] == 1
    unbound = {r["entryId"]: r.get("sourceState") for r in found["unbound"]["results"]}
    assert (unbound[citing], unbound[inside], found["unbound"]["hidden"]) == ("ok", None, 0)
    assert citing not in blocks["bound"]  # neither in the index nor in the selection
    assert f"[{inside}]" in blocks["bound"][blocks["bound"].index(SELECTED_HEADING) :]
    assert f"[{citing}]" in blocks["unbound"][blocks["unbound"].index(SELECTED_HEADING) :]


def test_a_forget_proposal_outside_is_not_found_and_writes_nothing(
    api: Api, resources: LocalResources, team: dict[str, str]
) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], team["bound"])
    before = workspace_items(resources, ws)
    for name in OUTSIDE:
        forget = automation(
            api,
            "POST",
            f"/v1/automation/workspaces/{ws}/entries/{team[name]}/forget",
            admission,
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert error(forget) == (404, "ENTRY_NOT_FOUND"), name
    assert workspace_items(resources, ws) == before


def test_a_verification_of_an_entry_outside_is_not_found_and_writes_nothing(
    api: Api, resources: LocalResources, team: dict[str, str]
) -> None:
    """`verify_memory` stays inside the binding too; the entry inside verifies on the same evidence."""
    ws, document = team["ws"], "# Team\n- releases go out on tuesdays\n"
    assert api.save(team["owner"], ws, document, 0).status_code == 200
    read = {"kind": "document-version", "ref": "1", "sha256": hashlib.sha256(document.encode()).hexdigest()}
    admission = admitted_under(api, ws, team["owner"], team["bound"])
    before = workspace_items(resources, ws)
    for name in OUTSIDE:
        path = f"/v1/automation/workspaces/{ws}/entries/{team[name]}/verify"
        verify = automation(api, "POST", path, admission, json={"revision": 1, "evidence": [read]})
        assert error(verify) == (404, "ENTRY_NOT_FOUND"), name
    assert workspace_items(resources, ws) == before
    path = f"/v1/automation/workspaces/{ws}/entries/{team['inside']}/verify"
    inside = automation(api, "POST", path, admission, json={"revision": 1, "evidence": [read]})
    assert (inside.status_code, inside.json()["outcome"]) == (200, "committed"), inside.text


def test_an_unbound_session_sees_and_writes_as_before(api: Api, team: dict[str, str]) -> None:
    ws = team["ws"]
    admission = admitted_under(api, ws, team["owner"], api.key_session(team["owner"], ws), message="releases")
    path = f"/v1/automation/workspaces/{ws}/entries"
    for name in ("inside", *OUTSIDE):
        assert automation(api, "GET", f"{path}/{team[name]}", admission).status_code == 200, name
    query = urlencode({"q": "releases", "k": 20})
    found = automation(api, "GET", f"/v1/automation/workspaces/{ws}/search?{query}", admission).json()
    ids = {r["entryId"] for r in found["results"]}
    assert {team[name] for name in ("inside", *OUTSIDE)} <= ids
    block = automation(api, "GET", f"/v1/automation/workspaces/{ws}/memory?purpose=recall", admission).json()["block"]
    assert all(team[name] in block for name in ("inside", *OUTSIDE))
    saved = agent_save(api, ws, admission, key="hr/holidays")
    assert saved.status_code == 200, saved.text
