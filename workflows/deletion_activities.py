"""Activities of a workspace deletion: all its I/O, through the automation API's deletion routes (the worker
never touches the table or the key store). Each is idempotent, so Temporal may retry it freely: destroying a
key already gone deletes nothing, and a purge batch deletes whatever is still there."""

from __future__ import annotations

from typing import TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.automation import ApiResponse, PurgeApi
from workspace_memory.api.models.base import OutModel
from workspace_memory.workspaces.deletion_contract import BranchKeyInput, PurgeBatchInput, PurgeBatchResult

Answer = TypeVar("Answer", bound=OutModel)


class DeletionActivities:
    def __init__(self, api: PurgeApi) -> None:
        self._api = api

    @activity.defn(name="destroy_branch_key")
    def destroy_branch_key(self, data: BranchKeyInput) -> int:
        return body_of(self._api.destroy_branch_key(data.workspace_id)).items_deleted

    @activity.defn(name="purge_batch")
    def purge_batch(self, data: PurgeBatchInput) -> PurgeBatchResult:
        activity.heartbeat(data.workspace_id)
        batch = body_of(self._api.purge_batch(data.workspace_id, data.limit, data.cleared))
        return PurgeBatchResult(deleted=batch.deleted, more=batch.more, turns=batch.turns)


def body_of(response: ApiResponse[Answer]) -> Answer:
    """The route's answer; a refusal (a workspace that is not deleted: 409) is final, never retried.
    Transport failures and 5xx raise `ApiUnavailable` in the client, which Temporal retries with backoff."""
    if response.body is None:
        raise ApplicationError(f"deletion step refused ({response.error_code or response.status})", non_retryable=True)
    return response.body
