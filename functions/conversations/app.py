"""Conversation routes (JWT): turn ingress and status, and memory receipts."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from workspace_memory.api.http import build_resolver, human_user, lambda_entry, respond
from workspace_memory.api.models.conversations import ReceiptsOut, TurnOut, TurnStarted
from workspace_memory.api.schemas.turns import StartTurn
from workspace_memory.bootstrap import services, turn_service

app = build_resolver()


@app.post(
    "/v1/conversations/<conv>/turns",
    summary="Start an agent turn",
    description=(
        "Admits a turn for the caller (a member of the workspace with AI on) and starts it as a durable workflow; "
        "202 with the turn's id, then poll `GET …/turns/{turnId}`. A resend with the same `idempotencyKey` returns "
        "the same turn; the new turn retires every older one of the conversation."
    ),
)
def start_turn(conv: str, body: Annotated[StartTurn, Body()]) -> Response[TurnStarted]:
    started = turn_service().start(body.request(conv, human_user(app)))
    return respond(202, TurnStarted.of(started))


@app.get(
    "/v1/conversations/<conv>/turns/<turn_id>",
    summary="Read a turn's status",
    description=(
        "The turn's status (`running`, `completed` or `failed`), its rounds and, once done, the reply with what "
        "each tool call did. Only the conversation's own user may read it (anyone else: 404). Changes nothing."
    ),
)
def get_turn(conv: str, turn_id: str) -> Response[TurnOut]:
    return respond(200, TurnOut.of(turn_id, turn_service().view(human_user(app), conv, turn_id)))


@app.get(
    "/v1/conversations/<conv>/memory-receipts",
    summary="List a conversation's memory receipts",
    description=(
        "What memory each recall of the conversation gave the model: its status, the document revision and the "
        "entry ids recalled and selected, never text. Only the conversation's own user may read them. Changes "
        "nothing."
    ),
)
def memory_receipts(
    conv: str,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response[ReceiptsOut]:
    return respond(200, ReceiptsOut.of(services().recall.receipts(human_user(app), conv, limit, cursor)))


handler: Any = lambda_entry(app)
