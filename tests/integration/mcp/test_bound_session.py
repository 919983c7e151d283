"""The MCP server under a key session bound to a context (decisions/0077), through the SDK's stdio client on the
local stack: whatever the server hands the assistant stays inside the binding. `list_entries`, the memory tool's
directory and key lookups page through the agent list under the session (not the person's own list), so an entry
outside never appears and a key outside answers as one no entry has; `ask_agent`'s turn is admitted under the
session, so its tools and its recall stay inside too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_bound_key_sessions import BIND, human_entry, open_session
from tests.integration.mcp.support import (
    call,
    error_code,
    server_env,
    stdio,
    structured,
    text,
    workspace,
    workspace_items,
)
from tests.integration.turn_support import run
from tests.support import Api
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

OUTSIDE = {
    # name: (key, fields), each outside BIND by one of its fields
    "by_prefix": ("hr/payroll", {"summary": "payroll runs monthly"}),
    "by_type": ("ops/freeze", {"type": "rule", "summary": "deploys freeze in december"}),
    "by_scope": ("ops/mine", {"scope": "member", "summary": "my own deploy checklist"}),
}
INSIDE_SUMMARY = "releases go out on tuesdays"


@pytest.fixture(scope="module")
def bound(api: Api) -> dict[str, Any]:
    """An `auto` workspace with one entry inside the binding, one outside by each of its fields and one without a
    key, and a key session of its owner bound to workspace facts under `ops/`."""
    owner, ws, _ = workspace(api, "auto", "# Team\n")
    ids = {"inside": human_entry(api, owner, ws, key="ops/deploys", summary=INSIDE_SUMMARY)}
    for name, (key, fields) in OUTSIDE.items():
        ids[name] = human_entry(api, owner, ws, key=key, **fields)
    ids["no_key"] = human_entry(api, owner, ws, summary="the release train leaves weekly")
    opened = open_session(api, owner, ws, BIND)
    assert opened.status_code == 201, opened.text
    return {"owner": owner, "ws": ws, "ks": opened.json()["keySessionId"], "ids": ids}


def outside_ids(bound: dict[str, Any]) -> set[str]:
    return {entry_id for name, entry_id in bound["ids"].items() if name != "inside"}


def memory(path: str) -> dict[str, Any]:
    """The memory tool's `view` of `path`."""
    return {"input": {"command": "view", "path": path}}


def test_list_entries_and_the_memory_directory_show_only_what_is_inside(api: Api, gateway_url: str, bound: Any) -> None:
    async def scenario() -> tuple[dict[str, Any], str]:
        async with stdio(server_env(gateway_url, bound["owner"], bound["ws"], bound["ks"])) as client:
            listed = structured(await call(client, "list_entries", {"limit": 100}))
            directory = structured(await call(client, "memory", memory("/memories/entries")))["result"]
            return listed, directory

    listed, directory = run(scenario())
    assert [row["entryId"] for row in listed["entries"]] == [bound["ids"]["inside"]]
    assert listed["hidden"] == 0
    assert bound["ids"]["inside"] in directory
    for entry_id in outside_ids(bound):
        assert entry_id not in json.dumps(listed)
        assert entry_id not in directory
    # The person still sees every entry on their own list: the binding is the session's, not theirs.
    person = api.call("GET", f"/v1/workspaces/{bound['ws']}/entries?limit=100", user=bound["owner"]).json()
    assert outside_ids(bound) <= {row["entryId"] for row in person["entries"]}


def test_a_key_lookup_outside_the_binding_answers_as_absent(api: Api, gateway_url: str, bound: Any) -> None:
    """The memory tool's `/memories/entries/<namespace>/<name>.md`: a key outside reads as a key no entry has
    (`ENTRY_NOT_FOUND`), and its text never reaches the assistant; the key inside reads."""
    paths = [f"/memories/entries/{key}.md" for key, _ in OUTSIDE.values()]

    async def scenario() -> tuple[str, list[str], str]:
        async with stdio(server_env(gateway_url, bound["owner"], bound["ws"], bound["ks"])) as client:
            inside = structured(await call(client, "memory", memory("/memories/entries/ops/deploys.md")))["result"]
            absent = await call(client, "memory", memory("/memories/entries/zz/none.md"))
            assert error_code(absent) == "ENTRY_NOT_FOUND"
            answers = [text(await call(client, "memory", memory(path))) for path in paths]
            return inside, answers, text(absent)

    inside, answers, absent = run(scenario())
    assert INSIDE_SUMMARY in inside
    for said, (key, fields) in zip(answers, OUTSIDE.values(), strict=True):
        assert said.replace(key, "zz/none") == absent, key  # the very answer of a key no entry has
        assert fields["summary"] not in said


def test_a_rename_onto_a_key_outside_learns_nothing_and_writes_nothing(
    api: Api, gateway_url: str, resources: LocalResources, bound: Any
) -> None:
    """Attack-style: a rename first asks whether the new key names an entry. Answered from the person's list, that
    told the assistant a key outside its binding is in use (`COMMAND_NOT_SUPPORTED`); inside the binding the key
    is free, and the copy is what the binding refuses, as for a key no entry has. Nothing is stored."""
    ws = bound["ws"]

    async def scenario() -> list[str]:
        async with stdio(server_env(gateway_url, bound["owner"], ws, bound["ks"])) as client:
            codes = []
            for target in ("hr/payroll", "hr/unused"):  # a key in use outside, and one no entry has
                paths = {"old_path": "/memories/entries/ops/deploys.md", "new_path": f"/memories/entries/{target}.md"}
                codes.append(error_code(await call(client, "memory", {"input": {"command": "rename", **paths}})))
            return codes

    before = stored(resources, ws)
    assert run(scenario()) == ["OUTSIDE_KEY_SESSION_BINDING", "OUTSIDE_KEY_SESSION_BINDING"]
    assert stored(resources, ws) == before


def stored(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    """The workspace's items but the advisory read counts (a rename reads its source entry first)."""
    counts = {"readCount", "lastReadAt"}
    return [{k: v for k, v in i.items() if k not in counts} for i in workspace_items(resources, ws)]


def test_ask_agent_runs_its_turn_inside_the_binding(api: Api, gateway_url: str, worker: Settings, bound: Any) -> None:
    """The one tool that acts with the person's token starts a turn admitted under the bound session: its
    `read_memory` of an entry outside finds nothing, its search and its recall leave everything outside out."""
    outside = bound["ids"]["by_prefix"]
    message = f"read: {outside}\nsearch: releases payroll deploys\nWhat do you know?"

    async def scenario() -> dict[str, Any]:
        async with stdio(server_env(gateway_url, bound["owner"], bound["ws"], bound["ks"])) as client:
            return structured(await call(client, "ask_agent", {"message": message}))

    turn = run(scenario())
    assert turn["status"] == "completed"
    assert [(o["tool"], o["outcome"]) for o in turn["toolOutcomes"]] == [
        ("read_memory", "not_found"),
        ("search_memory", "found"),
    ]
    answer = turn["answer"]
    assert bound["ids"]["inside"] in answer  # found by the search, and in the recalled index
    for name, entry_id in bound["ids"].items():
        if name != "inside":
            assert entry_id not in answer.replace(f"read_memory → error: No entry {outside}", ""), name
    for _, fields in OUTSIDE.values():
        assert fields["summary"] not in answer
