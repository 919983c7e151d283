"""What a client sees before it calls anything, and what a call that fails a tool's schema gets back (issue 20):
honest annotations, descriptions without docstring indentation, every field described, byte bounds stated and
enforced, the package's version, and `INVALID_ARGUMENTS` (never pydantic's own message) with nothing stored."""

from __future__ import annotations

import sys
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Tool

from scripts.localstack.resources import LocalResources
from tests.integration.mcp.support import ROOT, call, error_code, server_env, stdio, text, workspace
from tests.integration.turn_support import run
from tests.support import Api, scan_all

pytestmark = pytest.mark.integration

READ_ONLY = {"recall_memory", "search_memory", "read_entry", "list_entries"}
WRITES = {"remember", "save_entry", "forget_entry", "verify_entry", "memory", "ask_agent"}


def properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every property of the schema and of each model it defines, by dotted name."""
    found = [(name, prop) for name, prop in schema.get("properties", {}).items()]
    for model, definition in schema.get("$defs", {}).items():
        found += [(f"{model}.{name}", prop) for name, prop in definition.get("properties", {}).items()]
    return found


def test_tools_are_annotated_described_bounded_and_versioned(api: Api, gateway_url: str) -> None:
    owner, ws, ks = workspace(api, "auto", "# Team\n")

    async def scenario() -> tuple[dict[str, Tool], str]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert client.server_info is not None
            return tools, client.server_info.version

    tools, version = run(scenario())
    assert set(tools) == READ_ONLY | WRITES
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert version == pyproject["project"]["version"] != ""

    for name, tool in tools.items():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in READ_ONLY), name
        assert tool.annotations.open_world_hint is (name == "ask_agent"), name
        assert tool.description is not None
        assert "\n    " not in tool.description, name  # the docstring's indentation does not leak
        assert tool.description == tool.description.strip()
        for field, prop in properties(tool.input_schema):
            assert prop.get("description"), f"{name}: {field} has no description"
    assert tools["remember"].annotations is not None
    assert tools["remember"].annotations.destructive_hint is True
    assert tools["forget_entry"].annotations is not None
    assert tools["forget_entry"].annotations.destructive_hint is False  # a proposal, never the forget

    add = tools["remember"].input_schema["$defs"]["AddEdit"]["properties"]
    line = add["line"]
    assert (line["maxLength"], line["minLength"]) == (500, 1)
    assert "500 UTF-8 bytes" in line["description"]
    assert "heading" in add["heading"]["description"]
    entry = tools["save_entry"].input_schema["$defs"]["EntryInput"]["properties"]
    assert (entry["title"]["maxLength"], entry["summary"]["maxLength"]) == (120, 200)


def test_a_call_that_fails_the_schema_is_invalid_arguments_and_stores_nothing(
    api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """Attack-style: each call is wrong in a way the schema catches; before issue 20 the answer was pydantic's
    message (with the rejected input in it) and the 500-byte bound was not enforced in bytes at all."""
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    secretish = "é" * 251  # 502 UTF-8 bytes in 251 characters: under maxLength, over the byte bound
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("remember", {"edits": [{"op": "add", "line": secretish}], "base_version": 1}, "line (too_many_bytes)"),
        ("remember", {"edits": [{"op": "add", "line": "- x", "heading": secretish}], "base_version": 1}, "heading"),
        ("remember", {"edits": [{"op": "rewrite", "line": "- x"}], "base_version": 1}, "edits.0"),
        ("remember", {"edits": [{"op": "add", "line": "- x"}]}, "base_version (missing)"),
        ("remember", {"edits": [{"op": "add", "line": "- x", "extra": 1}], "base_version": 1}, "extra_forbidden"),
        ("search_memory", {"query": "q", "k": 99}, "k (less_than_equal)"),
        ("save_entry", {"entry": {"type": "fact", "title": secretish, "summary": "s"}}, "title"),
        ("read_entry", {"entry_id": "e" * 200}, "entry_id (string_too_long)"),
        ("memory", {"input": {"command": "format", "path": "/memories"}}, "input"),
        ("memory", {"input": {"command": "view"}}, "input.view.path (missing)"),
    ]
    before = scan_all(resources)

    async def scenario() -> list[tuple[str, str]]:
        async with stdio(server_env(gateway_url, owner, ws, ks)) as client:
            return [(error_code(r), text(r)) for r in [await call(client, t, a) for t, a, _ in calls]]

    answers = run(scenario())
    assert scan_all(resources) == before  # nothing admitted, nothing written
    for (tool, _, where), (code, message) in zip(calls, answers, strict=True):
        assert code == "INVALID_ARGUMENTS", (tool, message)
        assert where in message, (tool, message)
        assert "é" not in message
        assert "validation error" not in message  # not pydantic's own text
    assert api.read(owner, ws)["version"] == 1


def test_memory_text_never_reaches_the_servers_log(api: Api, gateway_url: str, tmp_path: Path) -> None:
    """The SDK logs every failed call (its message) and every refused one (its fields): calls that carry a
    marker as memory text, refused and answered alike, leave no trace of it in the server's stderr."""
    owner, ws, ks = workspace(api, "auto", "# Team\n")
    marker = f"MARK{uuid.uuid4().hex}"
    steps: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"edits": [{"op": "add", "line": "é" * 251 + marker}], "base_version": 1}),
        ("remember", {"edits": [{"op": "remove", "line": f"- {marker}"}], "base_version": 1}),
        ("remember", {"edits": [{"op": "add", "line": f"- {marker}"}], "base_version": 0}),
        (
            "memory",
            {
                "input": {
                    "command": "str_replace",
                    "path": "/memories/workspace.md",
                    "old_str": marker,
                    "new_str": marker,
                }
            },
        ),
        ("memory", {"input": {"command": "create", "path": f"/memories/{marker}.md", "file_text": marker}}),
        ("memory", {"input": {"command": "create", "path": "/memories/entries/t/m.md", "file_text": marker}}),
        ("save_entry", {"entry": {"type": "rule", "title": marker, "summary": marker}}),
        ("search_memory", {"query": marker}),
    ]
    log = tmp_path / "server.log"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server"], env=server_env(gateway_url, owner, ws, ks), cwd=ROOT
    )

    async def scenario() -> list[bool]:
        with log.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return [(await call(client, tool, arguments)).is_error for tool, arguments in steps]

    failed = run(scenario())
    assert failed == [True, True, False, True, True, False, True, False]  # refused and answered calls alike
    written = log.read_text(encoding="utf-8")
    assert "rejected arguments" in written  # the log is the server's, and it did log the calls
    assert marker not in written
