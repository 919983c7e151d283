"""Conversation routes (JWT): turn ingress and status, and memory receipts."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from workspace_memory.api.http import build_resolver, human_user, json_response, lambda_entry
from workspace_memory.api.schemas import StartTurn
from workspace_memory.bootstrap import services, turn_service

app = build_resolver()


@app.post("/v1/conversations/<conv>/turns")
def start_turn(conv: str, body: Annotated[StartTurn, Body()]) -> Response[str]:
    started = turn_service().start(
        user_id=human_user(app),
        conversation_id=conv,
        workspace_id=body.workspace_id,
        message=body.message,
        idempotency_key=body.idempotency_key,
        memory_state=body.memory_state,
        key_session_id=body.key_session_id,
        session_id=body.session_id,
    )
    return json_response(202, {"turnId": started.turn_id, "admissionId": started.admission_id})


@app.get("/v1/conversations/<conv>/turns/<turn_id>")
def get_turn(conv: str, turn_id: str) -> Response[str]:
    view = turn_service().view(human_user(app), conv, turn_id)
    out = view.model_dump(mode="json", exclude={"conversation_id"})
    return json_response(
        200,
        {
            "turnId": turn_id,
            "status": out["status"],
            "answer": out["answer"],
            "rounds": out["rounds"],
            "toolOutcomes": [_without_nulls(o) for o in out["tool_outcomes"]],
            "receipts": out["receipts"],
        },
    )


def _without_nulls(outcome: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in outcome.items() if v is not None}


@app.get("/v1/conversations/<conv>/memory-receipts")
def memory_receipts(
    conv: str,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response[str]:
    page = services().recall.receipts(human_user(app), conv, limit, cursor)
    return json_response(200, {"receipts": page.receipts, "nextCursor": page.next_cursor})


handler: Any = lambda_entry(app)
