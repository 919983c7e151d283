"""The MCP server through the SDK's own client: over stdio (a subprocess) and streamable HTTP (a loopback
port), against the local stack, with a real worker on the Temporal dev server for `ask_agent`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from scripts.localstack.resources import LocalResources
from tests.integration.mcp.support import (
    ROOT,
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
from tests.support import Api, new_user, scan_all
from workspace_memory.api.body import MAX_BODY_BYTES
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

TOOLS = {
    "recall_memory",
    "search_memory",
    "remember",
    "ask_agent",
    "read_entry",
    "list_entries",
    "save_entry",
    "forget_entry",
    "verify_entry",
    "memory",
}


def test_stdio_lists_typed_tools_recalls_and_remembers_in_auto(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n- deploys on Fridays\n")

    async def scenario() -> tuple[Any, ...]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            recalled = structured(await call(client, "recall_memory"))
            added = {"op": "add", "line": "- use feature flags"}
            committed = structured(await call(client, "remember", {"edits": [added], "base_version": 1}))
            before = workspace_items(resources, ws)
            stale = structured(
                await call(client, "remember", {"edits": [{"op": "add", "line": "- lost"}], "base_version": 1})
            )
            after_stale = workspace_items(resources, ws)
            return tools, recalled, committed, before, stale, after_stale

    tools, recalled, committed, before, stale, after_stale = run(scenario())

    assert set(tools) == TOOLS
    remember_schema = tools["remember"].input_schema
    assert set(remember_schema["required"]) == {"edits", "base_version"}
    assert remember_schema["properties"]["edits"]["maxItems"] == 5
    assert tools["ask_agent"].input_schema["required"] == ["message"]
    assert tools["recall_memory"].output_schema is not None
    assert {"status", "revision", "block", "memoryWrite"} <= set(tools["recall_memory"].output_schema["properties"])

    assert (recalled["status"], recalled["revision"], recalled["memoryWrite"]) == ("ok", 1, "commit")
    assert "- deploys on Fridays" in recalled["block"]
    assert recalled["block"].startswith("<<<WORKSPACE-MEMORY") or "<<<WORKSPACE-MEMORY" in recalled["block"]

    assert (committed["outcome"], committed["remembered"], committed["version"]) == ("committed", True, 2)
    assert committed["receipt"]["version"] == 2
    assert api.read(owner, ws)["content"] == "# Team\n- deploys on Fridays\n- use feature flags\n"

    # A stale base: a conflict, the same change as a proposal against the newer text, which is untouched.
    assert (stale["outcome"], stale["remembered"]) == ("conflict", False)
    assert stale["proposal"]["baseVersion"] == 2
    assert after_stale == before
    assert api.read(owner, ws)["version"] == 2


def test_search_memory_finds_the_users_entries_and_refuses_bad_input_with_its_code(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    bob = new_user("bob")
    api.add_member(owner, ws, bob, "editor")
    marker = f"PRIVATE{uuid.uuid4().hex}"
    entries = [
        (owner, {"scope": "workspace", "title": "Release window", "summary": "production releases go out on Tuesdays"}),
        (owner, {"scope": "workspace", "title": "Invoices", "summary": "the customer is billed in euros"}),
        (bob, {"scope": "member", "title": "My release notes", "summary": f"{marker} production releases"}),
    ]
    ids = []
    for user, body in entries:
        created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json={"type": "fact", "body": "", **body})
        assert created.status_code == 201, created.text
        ids.append(created.json()["entryId"])

    async def scenario() -> tuple[Any, ...]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            schema = {tool.name: tool for tool in (await client.list_tools()).tools}["search_memory"].input_schema
            found = structured(await call(client, "search_memory", {"query": "when do releases go out", "k": 2}))
            private = structured(await call(client, "search_memory", {"query": marker, "k": 20}))
            before = workspace_items(resources, ws)
            blank = await call(client, "search_memory", {"query": "   "})
            too_long = await call(client, "search_memory", {"query": "é" * 1024})
            unchanged = workspace_items(resources, ws) == before
            return schema, found, private, blank, too_long, unchanged

    schema, found, private, blank, too_long, unchanged = run(scenario())
    assert schema["required"] == ["query"]
    assert schema["properties"]["k"]["maximum"] == 20
    assert [r["entryId"] for r in found["results"]][:1] == [ids[0]]
    assert set(found["results"][0]) == {"entryId", "revision", "title", "summary", "score"}
    assert ids[2] not in [r["entryId"] for r in private["results"]]  # Bob's private entry, never the owner's
    assert marker not in json.dumps(private)
    # Refused by the route with its stable code; nothing of the workspace changed.
    assert (error_code(blank), error_code(too_long)) == ("INVALID_REQUEST", "INVALID_REQUEST")
    assert "é" * 10 not in text(too_long)
    assert unchanged


def test_remember_in_read_only_is_a_proposal(api: Api, gateway_url: str, resources: LocalResources) -> None:
    owner, ws, ks = workspace(api, "read_only", "# Team\n")
    before = workspace_items(resources, ws)

    async def scenario() -> dict[str, Any]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            edits = [{"op": "add", "line": "- prefer small PRs"}]
            return structured(await call(client, "remember", {"edits": edits, "base_version": 1}))

    proposed = run(scenario())
    assert (proposed["outcome"], proposed["remembered"]) == ("proposal", False)
    assert proposed["proposal"]["edits"] == [{"op": "add", "line": "- prefer small PRs"}]
    assert "version" not in proposed
    assert workspace_items(resources, ws) == before
    assert api.read(owner, ws)["content"] == "# Team\n"


def test_bad_input_shows_the_stable_code_and_changes_nothing(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    huge = "x" * (MAX_BODY_BYTES + 1024)  # over the routes' body cap (and a line's): refused before admitting

    async def scenario() -> list[tuple[str, bool]]:
        outcomes: list[tuple[str, bool]] = []
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            steps: list[tuple[str, dict[str, Any]]] = [
                ("remember", {"edits": [{"op": "add", "line": huge}], "base_version": 1}),
                ("ask_agent", {"message": huge}),
                ("revoke", {}),
                ("recall_memory", {}),
                ("remember", {"edits": [{"op": "add", "line": "- after revocation"}], "base_version": 1}),
                ("ask_agent", {"message": "remember: - after revocation"}),
            ]
            for tool, arguments in steps:
                if tool == "revoke":
                    revoked = api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{ks}", user=owner)
                    assert revoked.status_code == 204
                    continue
                before = scan_all(resources)
                result = await call(client, tool, arguments)
                outcomes.append((error_code(result), scan_all(resources) == before))
                assert huge not in text(result)
        return outcomes

    assert run(scenario()) == [
        ("INVALID_ARGUMENTS", True),  # over the tool's 500-byte line, by its schema
        ("PAYLOAD_TOO_LARGE", True),
        ("KEY_SESSION_INVALID", True),
        ("KEY_SESSION_INVALID", True),
        ("KEY_SESSION_INVALID", True),
    ]
    assert api.read(owner, ws)["version"] == 1


def test_a_server_without_valid_configuration_refuses_to_start(gateway_url: str) -> None:
    env = {"WM_API_URL": gateway_url, "WM_USER_ID": "u", "WM_WORKSPACE_ID": "w", "WM_AUTH": "dev"}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_server"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "MCP server configuration: WM_KEY_SESSION_ID: Field required"


def test_ask_agent_runs_an_admitted_turn_under_the_key_session(api: Api, gateway_url: str, worker: Settings) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n- deploys on Fridays\n")

    async def scenario() -> dict[str, Any]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            message = "remember: - use feature flags\nWhat do you know?"
            return structured(await call(client, "ask_agent", {"message": message}))

    turn = run(scenario())
    assert (turn["status"], turn["remembered"]) == ("completed", True)
    assert [(o["tool"], o["outcome"]) for o in turn["toolOutcomes"]] == [("remember_in_memory", "committed")]
    assert [(r["status"], r["revision"]) for r in turn["receipts"]] == [("ok", 1), ("ok", 2)]
    assert "- use feature flags" in turn["answer"]
    assert api.read(owner, ws)["content"] == "# Team\n- deploys on Fridays\n- use feature flags\n"
    # The turn is the user's own, on the route a person would read it from.
    view = api.call("GET", f"/v1/conversations/{turn['conversationId']}/turns/{turn['turnId']}", user=owner)
    assert view.json()["answer"] == turn["answer"]


@contextmanager
def http_server(env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """`python -m mcp_server --http --port 0`: the endpoint URL it prints once its socket listens, and the
    client secret it generated (the next line) or was given."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_server", "--http", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("serving http://127.0.0.1:"), line
        token = env.get("WM_MCP_HTTP_TOKEN") or proc.stdout.readline().strip().rpartition(": ")[2]
        yield line.removeprefix("serving "), token
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def test_streamable_http_on_loopback_recalls_and_refuses_a_foreign_host(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n- on call: Dana\n")
    with http_server(server_env(gateway_url, owner, ws, ks)) as (url, token):

        async def scenario() -> tuple[set[str], dict[str, Any]]:
            async with http_client(url, token) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                return names, structured(await call(client, "recall_memory"))

        names, recalled = run(scenario())
        foreign = requests.post(url, headers={"Host": "evil.example:80"}, json={}, timeout=60)
        cross_origin = requests.post(url, headers={"Origin": "http://evil.example"}, json={}, timeout=60)

    assert names == TOOLS
    assert (recalled["status"], recalled["revision"]) == ("ok", 1)
    assert "- on call: Dana" in recalled["block"]
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (421, "HOST_NOT_ALLOWED")
    assert (cross_origin.status_code, cross_origin.json()["error"]["code"]) == (421, "HOST_NOT_ALLOWED")


def test_streamable_http_refuses_a_local_process_without_the_client_secret(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """Attack (issue 17, finding 8): any local process could call every tool as the user over HTTP. Without
    the secret, with a wrong one, or with the right one twice, a tool call is 401 and nothing is written."""
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    secret = "s" * 40
    call_remember: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "remember",
            "arguments": {"edits": [{"op": "add", "line": "- planted by a stranger"}], "base_version": 1},
        },
    }
    mcp_headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    before = scan_all(resources)
    with http_server({**server_env(gateway_url, owner, ws, ks), "WM_MCP_HTTP_TOKEN": secret}) as (url, token):
        assert token == secret
        attempts = [
            {},
            {"Authorization": "Bearer " + "t" * 40},
            {"Authorization": secret},
            {"Authorization": f"Basic {secret}"},
        ]
        answers = [
            requests.post(url, headers={**mcp_headers, **extra}, json=call_remember, timeout=60) for extra in attempts
        ]
        refused_state = scan_all(resources)

        async def scenario() -> dict[str, Any]:
            async with http_client(url, secret) as client:
                return structured(await call(client, "recall_memory"))

        recalled = run(scenario())
    for answer in answers:
        assert (answer.status_code, answer.json()["error"]["code"]) == (401, "UNAUTHENTICATED")
        assert answer.headers["www-authenticate"] == "Bearer"
    assert refused_state == before  # no admission, no receipt, no version
    assert (recalled["status"], recalled["revision"]) == ("ok", 1)  # the secret's holder still reads it
    assert "planted" not in recalled["block"]
    assert api.read(owner, ws)["content"] == "# Team\n"


def test_a_short_configured_client_secret_refuses_to_start(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    env = {**server_env(gateway_url, owner, ws, ks), "WM_MCP_HTTP_TOKEN": "short"}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_server", "--http", "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "WM_MCP_HTTP_TOKEN must be at least 32 characters" in done.stderr
    assert "short" not in done.stderr.replace("WM_MCP_HTTP_TOKEN", "")


def test_each_call_is_its_own_admission_under_the_key_session(api: Api, gateway_url: str) -> None:
    """Two recalls: two receipts on the server's conversation, each of a distinct admission."""
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    conv = f"mcp-{uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        async with stdio({**server_env(gateway_url, owner, ws, ks), "WM_CONVERSATION_ID": conv}) as client:
            for _ in range(2):
                assert structured(await call(client, "recall_memory"))["status"] == "ok"

    run(scenario())
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()["receipts"]
    assert [r["status"] for r in receipts] == ["ok", "ok"]
    assert len({r["admissionId"] for r in receipts}) == 2


def test_the_readme_mcp_servers_block_starts_the_server(api: Api, gateway_url: str) -> None:
    """The README's `mcpServers` entry, with this checkout's path and a live key session, as a client runs it."""
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```json\n(\{\n  \"mcpServers\".*?)```", readme, re.S)
    assert found is not None
    entry = json.loads(found[1].replace("/path/to/workspace-memory", str(ROOT)))["mcpServers"]["workspace-memory"]
    env = {
        **entry["env"],
        "WM_API_URL": gateway_url,
        "WM_USER_ID": owner,
        "WM_WORKSPACE_ID": ws,
        "WM_KEY_SESSION_ID": ks,
    }
    assert set(env) == set(entry["env"])
    server = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd="/")

    async def scenario() -> dict[str, Any]:
        async with Client(server) as client:
            return structured(await call(client, "recall_memory"))

    assert run(scenario())["status"] == "ok"
