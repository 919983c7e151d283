"""Conversation routes (JWT): memory receipts (and, with the turns issue, turn ingress and status)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from workspace_memory.api.http import build_resolver, human_user, json_response, lambda_entry
from workspace_memory.bootstrap import services

app = build_resolver()


@app.get("/v1/conversations/<conv>/memory-receipts")
def memory_receipts(conv: str) -> Response[str]:
    return json_response(200, {"receipts": services().recall.receipts(human_user(app), conv)})


handler: Any = lambda_entry(app)
