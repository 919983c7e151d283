"""Conversation routes (JWT): turn ingress and status, and memory receipts."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from workspace_memory.api.http import build_resolver, human_user, lambda_entry, respond
from workspace_memory.api.models.conversations import ReceiptsOut, TurnOut, TurnStarted
from workspace_memory.api.schemas import StartTurn
from workspace_memory.bootstrap import services, turn_service

app = build_resolver()


@app.post("/v1/conversations/<conv>/turns")
def start_turn(conv: str, body: Annotated[StartTurn, Body()]) -> Response[TurnStarted]:
    started = turn_service().start(body.request(conv, human_user(app)))
    return respond(202, TurnStarted.of(started))


@app.get("/v1/conversations/<conv>/turns/<turn_id>")
def get_turn(conv: str, turn_id: str) -> Response[TurnOut]:
    return respond(200, TurnOut.of(turn_id, turn_service().view(human_user(app), conv, turn_id)))


@app.get("/v1/conversations/<conv>/memory-receipts")
def memory_receipts(
    conv: str,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response[ReceiptsOut]:
    return respond(200, ReceiptsOut.of(services().recall.receipts(human_user(app), conv, limit, cursor)))


handler: Any = lambda_entry(app)
