"""The change feed: DynamoDB stream records of the table in, ids-only audit events out
(docs/architecture.md#the-change-feed)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from workspace_memory.bootstrap import change_feed, instrumented

logger = Logger(service="workspace-memory")


@logger.inject_lambda_context(clear_state=True)
def _handle(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    """Parse the batch, publish it, answer Lambda's partial batch response. Logs counts, never keys: one line
    per batch, with the invocation's request id and cold start (inject_lambda_context)."""
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


handler: Any = instrumented(_handle)
