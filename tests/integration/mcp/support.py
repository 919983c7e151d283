"""What the MCP tests share: a workspace with a key session, the server's environment, the SDK's stdio client,
and readers of a tool's answer (its structured content, its text, the stable code a tool error leads with)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from scripts.localstack.resources import LocalResources
from tests.support import ALL_SCOPE_NAMES, Api, new_user, scan_all

ROOT = Path(__file__).resolve().parents[3]


def workspace(
    api: Api, mode: str, content: str, scopes: Sequence[str] | None = ALL_SCOPE_NAMES
) -> tuple[str, str, str]:
    """A workspace with AI on, `mode`, one saved version, and a key session of its owner: (owner, ws, ks)."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": mode, "expectedRevision": 0}
    )
    assert policy.status_code == 200, policy.text
    assert api.save(owner, ws, content, 0).status_code == 200
    return owner, ws, api.key_session(owner, ws, scopes)


def server_env(gateway_url: str, owner: str, ws: str, ks: str) -> dict[str, str]:
    return {
        "WM_API_URL": gateway_url,
        "WM_USER_ID": owner,
        "WM_WORKSPACE_ID": ws,
        "WM_KEY_SESSION_ID": ks,
        "WM_AUTH": "dev",
        "WM_ASK_TIMEOUT_SECONDS": "120",
    }


def stdio(env: dict[str, str]) -> Client:
    """The SDK's client, spawning `python -m mcp_server` (stdio) from the repository's root."""
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "mcp_server"], env=env, cwd=ROOT))


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    return await client.call_tool(tool, arguments or {})


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def error_code(result: CallToolResult) -> str:
    """The stable code a tool error leads with (after the SDK's "Error executing tool <name>: ")."""
    assert result.is_error
    found = re.fullmatch(r"Error executing tool \w+: ([A-Z][A-Z_]{2,}): .*", text(result), re.S)
    assert found is not None, text(result)
    return found[1]


def workspace_items(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    """Everything stored under the workspace: document head and versions, policy, members, key sessions,
    entries and candidates; not its audit events (each tool call's admission writes one, as a turn's does:
    tests/integration/governance/test_audit.py checks them)."""
    return [
        item
        for item in scan_all(resources)
        if item["pk"]["S"] == f"WS#{ws}" and not item["sk"]["S"].startswith("AUDIT#")
    ]
