"""`recall_memory` over MCP against the HTTP recall route, in one run, on the bench's own stack.

The MCP server runs as an assistant would run it: `python -m mcp_server` spawned by the SDK's stdio client,
calling the stack's gateway with the dev auth. Each `recall_memory` is an admission and a recall (the
server's own choice: one admission per call), so two HTTP baselines are timed in the same round-robin
loop: the recall route alone under one admission made untimed (what an agent runtime pays per model call),
and the admission plus the recall (the very HTTP work one tool call makes). The MCP figure minus the
second is what the MCP hop (stdio framing, JSON-RPC, the SDK's validation) costs.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from scripts.bench.report import format_ratio, format_table
from scripts.bench.stats import median, p90, ratio
from scripts.localstack.client import DevClient
from scripts.localstack.stack import LocalStack
from workflows.automation import AutomationApi, DevAuth

ROOT = Path(__file__).resolve().parents[2]
RECALL_ROUTE = "HTTP recall route"
ADMIT_AND_RECALL = "HTTP admission + recall"
MCP_RECALL = "MCP recall_memory (stdio)"


@dataclass(frozen=True)
class McpRow:
    name: str
    median_ms: float
    p90_ms: float
    median_ratio: float | None
    baseline_name: str


@dataclass(frozen=True)
class McpReport:
    text: str
    rows: list[McpRow]


def _workspace(api: DevClient, content: str) -> tuple[str, str, str]:
    owner = f"bench-mcp-{uuid.uuid4().hex[:8]}"
    ws = api.call("POST", "/v1/workspaces", user=owner, json={"name": "bench", "shareType": "shared"}).json()
    ws_id: str = ws["workspaceId"]
    api.call("PUT", f"/v1/workspaces/{ws_id}/ai", user=owner, json={"enabled": True})
    api.call("PUT", f"/v1/workspaces/{ws_id}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0})
    saved = api.call(
        "PUT", f"/v1/workspaces/{ws_id}/memory", user=owner, json={"content": content}, headers={"X-Base-Version": "0"}
    )
    assert saved.status_code == 200, saved.text
    ks: str = api.call("POST", f"/v1/workspaces/{ws_id}/key-sessions", user=owner, json={}).json()["keySessionId"]
    return owner, ws_id, ks


async def _measure(gateway_url: str, content: str, calls: int, warmup: int) -> dict[str, list[float]]:
    owner, ws, ks = _workspace(DevClient(gateway_url), content)
    http = AutomationApi(gateway_url, DevAuth("bench"))
    conv = f"bench-mcp-http-{uuid.uuid4().hex[:8]}"

    def admit() -> tuple[str, str]:
        admitted = http.admit(conv, ws, owner, ks, uuid.uuid4().hex).body
        assert admitted is not None
        return admitted.admission_id, admitted.credential

    standing = admit()

    async def recall_route() -> None:
        assert http.recall(ws, *standing).body is not None

    async def admit_and_recall() -> None:
        assert http.recall(ws, *admit()).body is not None

    env = {"WM_API_URL": gateway_url, "WM_USER_ID": owner, "WM_WORKSPACE_ID": ws, "WM_KEY_SESSION_ID": ks}
    server = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server"], env=env, cwd=ROOT)
    async with Client(server) as client:

        async def mcp_recall() -> None:
            result = await client.call_tool("recall_memory", {})
            assert not result.is_error
            assert (result.structured_content or {}).get("status") == "ok"

        ways: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            (RECALL_ROUTE, recall_route),
            (ADMIT_AND_RECALL, admit_and_recall),
            (MCP_RECALL, mcp_recall),
        ]
        samples: dict[str, list[float]] = {name: [] for name, _ in ways}
        for i in range(warmup + calls):
            for name, way in ways:  # round-robin: drift in the machine's load reaches every way alike
                start = time.perf_counter()
                await way()
                if i >= warmup:
                    samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def mcp_benchmark(stack: LocalStack, content: str, calls: int, warmup: int) -> McpReport:
    gateway_url = stack.gateway()
    samples = asyncio.run(_measure(gateway_url, content, calls, warmup))
    rows: list[McpRow] = []
    for name, baseline in ((RECALL_ROUTE, RECALL_ROUTE), (ADMIT_AND_RECALL, RECALL_ROUTE), (MCP_RECALL, RECALL_ROUTE)):
        values = samples[name]
        rows.append(
            McpRow(name, median(values), p90(values), ratio(median(values), median(samples[baseline])), baseline)
        )
    overhead = rows[2].median_ms - rows[1].median_ms
    table = format_table(
        ["call", "median ms", "p90 ms", "median vs baseline"],
        [
            [r.name, f"{r.median_ms:.2f}", f"{r.p90_ms:.2f}", format_ratio(r.median_ratio, r.baseline_name)]
            for r in rows
        ],
        "<>><",
    )
    text = "\n".join(
        [
            f"MCP recall_memory: {calls} timed calls each way after {warmup} warm-up, round-robin; the server spawned "
            f"by the SDK's stdio client, calling the gateway {gateway_url}; one admission per tool call",
            "",
            table,
            "",
            f"The MCP hop: {overhead:.2f} ms per call (MCP recall_memory minus HTTP admission + recall, medians).",
        ]
    )
    return McpReport(text, rows)


def report_rows(report: McpReport) -> list[dict[str, Any]]:
    return [asdict(row) for row in report.rows]
