"""The change feed: DynamoDB stream records of the table in, ids-only audit events out
(docs/architecture.md#the-change-feed)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent

from workspace_memory.bootstrap import change_feed

logger = Logger(service="workspace-memory")


def handler(event: dict[str, Any], _context: Any) -> dict[str, Any]:
    """Parse the batch, publish it, answer Lambda's partial batch response. Logs counts, never keys."""
    result = change_feed().handle(DynamoDBStreamEvent(event).records)
    logger.info(
        "change feed batch",
        extra={
            "records": result.records,
            "published": result.published,
            "skipped": result.skipped,
            "failed": len(result.failed),
        },
    )
    return result.response()
