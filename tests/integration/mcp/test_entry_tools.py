"""The entry tools (issue 20) through the SDK's client on the local stack: save, read, list, search and propose
forgetting an entry, each under the key session, in `auto` and `read_only`; a session without the scope a tool
needs is refused with the API's own code, and nothing is stored."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.mcp.support import call, error_code, server_env, stdio, structured, workspace, workspace_items
from tests.integration.turn_support import run
from tests.support import Api

pytestmark = pytest.mark.integration

ENTRY = {"type": "fact", "title": "Release window", "summary": "production releases go out on Tuesdays"}


def test_save_read_list_search_and_propose_forgetting_in_auto(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n")

    async def scenario() -> dict[str, Any]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            saved = structured(await call(client, "save_entry", {"entry": {**ENTRY, "key": "team/releases"}}))
            read = structured(await call(client, "read_entry", {"entry_id": saved["entryId"]}))
            listed = structured(await call(client, "list_entries", {"limit": 5}))
            found = structured(await call(client, "search_memory", {"query": "when do releases go out"}))
            forget = structured(await call(client, "forget_entry", {"entry_id": saved["entryId"]}))
            still = structured(await call(client, "read_entry", {"entry_id": saved["entryId"]}))
            return {"saved": saved, "read": read, "listed": listed, "found": found, "forget": forget, "still": still}

    got = run(scenario())
    entry_id = got["saved"]["entryId"]
    assert (got["saved"]["outcome"], got["saved"]["revision"]) == ("committed", 1)
    assert (got["read"]["title"], got["read"]["key"], got["read"]["summary"]) == (
        "Release window",
        "team/releases",
        ENTRY["summary"],
    )
    assert [row["entryId"] for row in got["listed"]["entries"]] == [entry_id]
    assert [r["entryId"] for r in got["found"]["results"]][:1] == [entry_id]
    for handed in ("read", "listed", "found"):  # seed 004: every memory an agent is handed says what it is
        assert (got[handed]["trust"], got[handed]["evidence"]) == ("untrusted", False)
    # A proposal a member decides, never the forget: the entry is still there and active.
    assert got["forget"]["outcome"] == "proposal"
    assert got["forget"]["candidateId"]
    assert (got["still"]["status"], got["still"]["revision"]) == ("active", 1)
    # The person sees the entry and the forget candidate on their own routes.
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()["status"] == "active"
    assert any(item["sk"]["S"].startswith("ENTRYCAND#") for item in workspace_items(resources, ws))


def test_save_entry_in_read_only_is_a_candidate_not_an_entry(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "read_only", "# Team\n")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            saved = structured(await call(client, "save_entry", {"entry": ENTRY}))
            return saved, structured(await call(client, "list_entries", {}))

    saved, listed = run(scenario())
    assert saved["outcome"] == "proposal"
    assert saved["candidateId"]
    assert "entryId" not in saved
    assert listed["entries"] == []
    assert api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"] == []


def test_a_session_without_the_scope_is_refused_with_the_apis_code(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """Attack-style: a read-only key session (memory:read, the default) tries every write; one with notes only
    tries every read, the list included (the person's own list is shown only once the session's read passes)."""
    owner, ws, reader = workspace(api, "auto", "# Team\n", scopes=None)
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json={**ENTRY, "scope": "workspace"})
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    notes_only = api.key_session(owner, ws, ["notes"])
    writes: list[tuple[str, dict[str, Any]]] = [
        ("save_entry", {"entry": ENTRY}),
        ("forget_entry", {"entry_id": entry_id}),
        ("memory", {"input": {"command": "create", "path": "/memories/entries/team/x.md", "file_text": "x"}}),
    ]
    reads: list[tuple[str, dict[str, Any]]] = [
        ("read_entry", {"entry_id": entry_id}),
        ("list_entries", {}),
        ("search_memory", {"query": "releases"}),
        ("memory", {"input": {"command": "view", "path": f"/memories/entries/{entry_id}.md"}}),
        ("memory", {"input": {"command": "view", "path": "/memories/entries"}}),
    ]

    async def attempts(ks: str, steps: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool]]:
        outcomes = []
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            for tool, arguments in steps:
                before = workspace_items(resources, ws)
                result = await call(client, tool, arguments)
                outcomes.append((error_code(result), workspace_items(resources, ws) == before))
        return outcomes

    assert run(attempts(reader, writes)) == [("SCOPE_NOT_GRANTED", True)] * len(writes)
    assert run(attempts(notes_only, reads)) == [("SCOPE_NOT_GRANTED", True)] * len(reads)


def test_verify_entry_marks_it_on_evidence_the_service_rechecks(api: Api, gateway_url: str) -> None:
    """`verify_entry` on the document version the agent read: committed, and the entry says by whom and on how
    many sources; evidence whose text changed is EVIDENCE_NOT_CURRENT and marks nothing."""
    content = "# Team\n- deploys on Fridays\n"
    owner, ws, ks = workspace(api, "auto", content)
    read = {"kind": "document-version", "ref": "1", "sha256": hashlib.sha256(content.encode()).hexdigest()}
    wrong = {**read, "sha256": hashlib.sha256(b"# Team\n- deploys on Mondays\n").hexdigest()}

    async def scenario() -> tuple[dict[str, Any], Any, dict[str, Any]]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            saved = structured(await call(client, "save_entry", {"entry": ENTRY}))
            refused = await call(
                client, "verify_entry", {"entry_id": saved["entryId"], "revision": 1, "evidence": [wrong]}
            )
            verified = structured(
                await call(client, "verify_entry", {"entry_id": saved["entryId"], "revision": 1, "evidence": [read]})
            )
            return saved, refused, verified

    saved, refused, verified = run(scenario())
    assert error_code(refused) == "EVIDENCE_NOT_CURRENT"
    assert verified == {"outcome": "committed", "entryId": saved["entryId"], "revision": 1}
    entry = api.call("GET", f"/v1/workspaces/{ws}/entries/{saved['entryId']}", user=owner).json()
    assert (entry["verifiedBy"], entry["verifiedEvidence"]) == (owner, 1)
