"""Anthropic's memory tool over this service (issue 20): all six commands through the SDK's client on the local
stack, a conflict and paths outside `/memories` refused with stored state unchanged, `read_only` turning writes
into proposals, and the plain `MemoryTool` class a Messages-API loop calls."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest
from mcp import Client

from mcp_server.config import McpConfig
from mcp_server.delegation import build_delegation
from mcp_server.memory_tool import MemoryTool
from scripts.localstack.resources import LocalResources
from tests.integration.mcp.support import call, error_code, server_env, stdio, structured, workspace, workspace_items
from tests.integration.turn_support import run
from tests.support import Api, scan_all

pytestmark = pytest.mark.integration

DOC = "# Team\n- deploys on Fridays\n- on call: Dana\n"


async def memory(client: Client, **command: Any) -> dict[str, Any]:
    return structured(await call(client, "memory", {"input": command}))


def test_the_six_commands_over_the_document_and_entries_in_auto(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "auto", DOC)
    rota = "/memories/entries/team/rota.md"

    async def scenario() -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            got["root"] = await memory(client, command="view", path="/memories")
            got["doc"] = await memory(client, command="view", path="/memories/workspace.md")
            got["range"] = await memory(client, command="view", path="/memories/workspace.md", view_range=[2, -1])
            got["replaced"] = await memory(
                client, command="str_replace", path="/memories/workspace.md", old_str="Fridays", new_str="Thursdays"
            )
            got["inserted"] = await memory(
                client, command="insert", path="/memories/workspace.md", insert_line=3, insert_text="- use flags\n"
            )
            path = "/memories/entries/team/oncall.md"
            got["created"] = await memory(client, command="create", path=path, file_text="Dana on call\nweekly rota")
            got["entry"] = await memory(client, command="view", path=path)
            got["entry_replaced"] = await memory(
                client, command="str_replace", path=path, old_str="weekly", new_str="Monday"
            )
            got["entry_inserted"] = await memory(
                client, command="insert", path=path, insert_line=2, insert_text="ask in ops"
            )
            got["listing"] = await memory(client, command="view", path="/memories/entries")
            got["renamed"] = await memory(client, command="rename", old_path=path, new_path=rota)
            got["moved"] = await memory(client, command="view", path=rota)
            got["deleted"] = await memory(client, command="delete", path=rota)
        return got

    got = run(scenario())
    assert "/memories/workspace.md" in got["root"]["result"]
    assert "/memories/entries/" in got["root"]["result"]
    assert got["doc"]["outcome"] == "viewed"
    assert "(revision 1," in got["doc"]["result"]
    assert got["doc"]["result"].endswith("     1\t# Team\n     2\t- deploys on Fridays\n     3\t- on call: Dana")
    assert got["range"]["result"].endswith("     2\t- deploys on Fridays\n     3\t- on call: Dana")
    assert (got["replaced"]["outcome"], got["inserted"]["outcome"]) == ("committed", "committed")
    assert "revision 3" in got["inserted"]["result"]
    assert api.read(owner, ws)["content"] == "# Team\n- deploys on Thursdays\n- on call: Dana\n- use flags\n"

    assert got["created"]["outcome"] == "committed"
    assert got["entry"]["result"].endswith("     1\tDana on call\n     2\tweekly rota")
    assert (got["entry_replaced"]["outcome"], got["entry_inserted"]["outcome"]) == ("committed", "committed")
    entry_id = got["entry"]["result"].split("(entry ", 1)[1].split(",", 1)[0]
    stored = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (stored["key"], stored["revision"], stored["summary"], stored["body"]) == (
        "team/oncall",
        3,
        "Dana on call",
        "Monday rota\nask in ops",
    )
    assert f"/memories/entries/{entry_id}.md" in got["listing"]["result"]
    # rename: saved under the new key, forgetting the old one proposed (never automatic); delete: a proposal too.
    assert got["renamed"]["outcome"] == "committed"
    assert "proposal, not saved" in got["renamed"]["result"]
    assert got["moved"]["result"].endswith("     1\tDana on call\n     2\tMonday rota\n     3\task in ops")
    assert got["deleted"]["outcome"] == "proposal"
    assert "never automatic" in got["deleted"]["result"]
    listed = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"]
    assert len(listed) == 2  # both still active until a member decides the forget candidates


def test_a_stale_view_conflicts_and_paths_outside_memories_are_refused(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """Attack-style: the document moved after the agent viewed it; paths that climb out of /memories or name
    nothing it maps. Each is a stable code and leaves every stored item as it was."""
    owner, ws, ks = workspace(api, "auto", DOC)
    doc = "/memories/workspace.md"
    refused: list[tuple[dict[str, Any], str]] = [
        ({"command": "view", "path": "/etc/passwd"}, "PATH_NOT_ALLOWED"),
        ({"command": "view", "path": "/memories/../etc/passwd"}, "PATH_NOT_ALLOWED"),
        ({"command": "create", "path": "/memories/entries/../../x.md", "file_text": "x"}, "PATH_NOT_ALLOWED"),
        ({"command": "create", "path": "/memories/./workspace.md", "file_text": "x"}, "PATH_NOT_ALLOWED"),
        ({"command": "create", "path": "/memoriesx/a.md", "file_text": "x"}, "PATH_NOT_ALLOWED"),
        ({"command": "rename", "old_path": doc, "new_path": "/tmp/w.md"}, "PATH_NOT_ALLOWED"),
        ({"command": "create", "path": "/memories/notes.md", "file_text": "x"}, "PATH_NOT_MAPPED"),
        ({"command": "create", "path": "/memories/entries/Team/A.md", "file_text": "x"}, "PATH_NOT_MAPPED"),
        ({"command": "delete", "path": doc}, "COMMAND_NOT_SUPPORTED"),
        ({"command": "create", "path": doc, "file_text": "x"}, "COMMAND_NOT_SUPPORTED"),
    ]
    # These read the document first (an admission and a recall receipt, outside the workspace's items).
    mismatched: list[tuple[dict[str, Any], str]] = [
        ({"command": "str_replace", "path": doc, "old_str": "Mars", "new_str": "x"}, "TEXT_NOT_FOUND"),
        ({"command": "str_replace", "path": doc, "old_str": "- ", "new_str": "x"}, "TEXT_AMBIGUOUS"),
        ({"command": "insert", "path": doc, "insert_line": 9, "insert_text": "x"}, "LINE_OUT_OF_RANGE"),
    ]

    async def scenario() -> tuple[list[tuple[str, bool]], list[tuple[str, bool]], str, bool]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            paths = []
            for command, _ in refused:
                before = scan_all(resources)  # nothing at all is called: the whole table stays as it was
                result = await call(client, "memory", {"input": command})
                paths.append((error_code(result), scan_all(resources) == before))
            texts = []
            for command, _ in mismatched:
                before = workspace_items(resources, ws)
                result = await call(client, "memory", {"input": command})
                texts.append((error_code(result), workspace_items(resources, ws) == before))
            await memory(client, command="view", path=doc)  # the agent's base: revision 1
            assert api.save(owner, ws, DOC + "- a person's line\n", 1).status_code == 200  # now revision 2
            before = workspace_items(resources, ws)
            replace = {"command": "str_replace", "path": doc, "old_str": "Dana", "new_str": "Eve"}
            stale = await call(client, "memory", {"input": replace})
            return paths, texts, error_code(stale), workspace_items(resources, ws) == before

    paths, texts, stale, unchanged = run(scenario())
    assert paths == [(code, True) for _, code in refused]
    assert texts == [(code, True) for _, code in mismatched]
    assert (stale, unchanged) == ("STALE_BASE_VERSION", True)
    assert api.read(owner, ws)["content"] == DOC + "- a person's line\n"


def test_in_read_only_every_write_is_a_proposal_and_the_answer_says_so(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "read_only", DOC)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            edit = await memory(
                client, command="str_replace", path="/memories/workspace.md", old_str="Dana", new_str="Eve"
            )
            entry = await memory(client, command="create", path="/memories/entries/team/x.md", file_text="a fact")
            return edit, entry

    edit, entry = run(scenario())
    for answer in (edit, entry):
        assert answer["outcome"] == "proposal"
        assert answer["result"].startswith("proposal, not saved:")
        assert "read_only" in answer["result"]
    assert api.read(owner, ws)["content"] == DOC
    assert api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"] == []


def test_the_plain_class_answers_a_messages_api_loop(api: Api, gateway_url: str, resources: LocalResources) -> None:
    """`MemoryTool.tool_result` takes a `tool_use` block's input and gives the `tool_result`'s content and
    is_error, as docs/mcp.md wires it to the Messages API."""
    owner, ws, ks = workspace(api, "auto", DOC)
    tool = MemoryTool(build_delegation(McpConfig.from_environ(server_env(gateway_url, owner, ws, ks))))
    before = scan_all(resources)
    outside = tool.tool_result({"command": "view", "path": "/root/.ssh"})
    wrong = tool.tool_result({"command": "view", "path": "/memories", "mode": "all"})
    assert scan_all(resources) == before
    assert (outside["is_error"], outside["content"].split(":")[0]) == (True, "PATH_NOT_ALLOWED")
    assert (wrong["is_error"], wrong["content"].split(":")[0]) == (True, "INVALID_ARGUMENTS")

    viewed = tool.tool_result({"command": "view", "path": "/memories/workspace.md"})
    assert (viewed["is_error"], viewed["content"].endswith("     3\t- on call: Dana")) == (False, True)
    insert = {"command": "insert", "path": "/memories/workspace.md", "insert_line": 3, "insert_text": "- x"}
    done = tool.tool_result(insert)
    assert (done["is_error"], done["content"]) == (False, "committed: /memories/workspace.md is now revision 2")
    assert api.read(owner, ws)["content"] == DOC + "- x\n"


def test_writes_are_redacted_as_any_agent_write_and_the_answer_says_so(api: Api, gateway_url: str) -> None:
    """A secret the agent writes through the memory tool is redacted before it is stored, in an entry and in the
    document alike, and never comes back in the answer."""
    owner, ws, ks = workspace(api, "auto", DOC)
    key = "AKIA" + "".join(random.choices(string.ascii_uppercase + string.digits, k=16))

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            entry = await memory(
                client, command="create", path="/memories/entries/ops/deploy.md", file_text=f"deploy with {key}"
            )
            edit = await memory(
                client, command="str_replace", path="/memories/workspace.md", old_str="Dana", new_str=f"Dana {key}"
            )
            return entry, edit

    entry, edit = run(scenario())
    for answer in (entry, edit):
        assert answer["outcome"] == "committed"
        assert "redacted before storing: 1 cloud_key" in answer["result"]
        assert key not in answer["result"]
    listed = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"]
    assert len(listed) == 1
    assert key not in json.dumps(listed)
    assert key not in api.read(owner, ws)["content"]


def test_an_entry_a_person_revised_after_the_view_is_a_stale_revision(api: Api, gateway_url: str) -> None:
    """Attack-style: the agent's edit was computed from revision 1; a person wrote revision 2 since. The write is
    refused with the entry's conflict code and the person's revision stays the head."""
    owner, ws, ks = workspace(api, "auto", DOC)
    fields = {"type": "fact", "title": "Rota", "summary": "Dana on call", "body": "weekly"}
    created = api.call(
        "POST", f"/v1/workspaces/{ws}/entries", user=owner, json={**fields, "scope": "workspace", "key": "team/rota"}
    )
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    path = "/memories/entries/team/rota.md"

    async def scenario() -> str:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            await memory(client, command="view", path=path)
            revised = api.call(
                "PUT",
                f"/v1/workspaces/{ws}/entries/{entry_id}",
                user=owner,
                json={**fields, "summary": "Eve on call"},
                headers={"X-Base-Revision": "1"},
            )
            assert revised.status_code == 200, revised.text
            replace = {"command": "str_replace", "path": path, "old_str": "weekly", "new_str": "daily"}
            return error_code(await call(client, "memory", {"input": replace}))

    assert run(scenario()) == "STALE_REVISION"
    head = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (head["revision"], head["summary"], head["body"]) == (2, "Eve on call", "weekly")


def test_memory_off_and_an_entry_without_a_key_refuse_with_their_codes(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """Memory `off` is MEMORY_OFF for the document as for entries (not an empty file to write into); a person's
    entry without a key is read-only to the memory tool (a save could not name its chain)."""
    owner, ws, ks = workspace(api, "auto", DOC)
    made = api.call(
        "POST",
        f"/v1/workspaces/{ws}/entries",
        user=owner,
        json={"type": "fact", "title": "Rota", "summary": "Dana on call", "scope": "workspace"},
    )
    assert made.status_code == 201, made.text
    entry_id = made.json()["entryId"]
    keyless = f"/memories/entries/{entry_id}.md"

    async def scenario() -> list[tuple[str, bool]]:
        outcomes = []
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            await memory(client, command="view", path=keyless)
            edit = {"command": "str_replace", "path": keyless, "old_str": "Dana", "new_str": "Eve"}
            code = error_code(await call(client, "memory", {"input": edit}))
            head = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
            outcomes.append((code, (head["revision"], head["summary"]) == (1, "Dana on call")))
            off = {"mode": "off", "expectedRevision": 1}
            assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=off).status_code == 200
            for command in (
                {"command": "view", "path": "/memories/workspace.md"},
                {"command": "insert", "path": "/memories/workspace.md", "insert_line": 0, "insert_text": "- x"},
            ):
                before = workspace_items(resources, ws)
                result = await call(client, "memory", {"input": command})
                outcomes.append((error_code(result), workspace_items(resources, ws) == before))
        return outcomes

    assert run(scenario()) == [("COMMAND_NOT_SUPPORTED", True), ("MEMORY_OFF", True), ("MEMORY_OFF", True)]
    assert api.read(owner, ws)["content"] == DOC
