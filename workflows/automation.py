"""The worker's client for the automation API: recall, capture and working notes over HTTP.

The worker has no table access (see template.yaml): everything it does to memory goes through the same
routes, fences and receipts as any other agent runtime. Locally it speaks the gateway's dev auth; on AWS
it signs requests with SigV4 for `execute-api`. Answers are parsed into the API's own response models
(`workspace_memory.api.models`): the route's model on a 2xx, the error envelope otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import quote, urlencode

import urllib3
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from workspace_memory.api.models.automation import (
    AdmissionOut,
    CaptureOut,
    EntrySaveOut,
    ForgetProposalOut,
    NotesMetaOut,
    NotesOut,
    RecallOut,
    VerificationOut,
)
from workspace_memory.api.models.base import OutModel
from workspace_memory.api.models.consolidation import PairsOut, RunCountsOut, RunOut
from workspace_memory.api.models.deletion import BranchKeyDestroyedOut, PurgeBatchOut
from workspace_memory.api.models.entries import AgentEntryOut, AgentSearchOut
from workspace_memory.api.models.entry_pages import AgentEntriesOut
from workspace_memory.api.models.envelope import ErrorOut
from workspace_memory.api.models.erasure import ErasureStepOut
from workspace_memory.api.models.exports import ExportFileOut, ExportFinishOut
from workspace_memory.api.models.imports import ImportFileOut, ImportFinishOut
from workspace_memory.workspaces.erasure_contract import StepInput


class Auth(Protocol):
    def headers(self, method: str, url: str, body: bytes) -> dict[str, str]: ...


@dataclass(frozen=True)
class DevAuth:
    """`Authorization: Bearer automation:<name>`: the local gateway's stand-in for IAM, loopback only."""

    name: str

    def headers(self, method: str, url: str, body: bytes) -> dict[str, str]:  # noqa: ARG002 - signs nothing
        return {"Authorization": f"Bearer automation:{self.name}"}


class SigV4Auth:
    """IAM auth for API Gateway: the worker role's credentials sign each request."""

    def __init__(self, region: str) -> None:
        import boto3
        from botocore.auth import SigV4Auth as _Signer

        credentials = boto3.session.Session().get_credentials()
        if credentials is None:
            raise RuntimeError("AUTOMATION_AUTH=iam needs AWS credentials (the worker's role)")
        self._credentials = credentials
        self._signer = _Signer
        self._region = region

    def headers(self, method: str, url: str, body: bytes) -> dict[str, str]:
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method=method, url=url, data=body, headers={"Content-Type": "application/json"})
        self._signer(self._credentials.get_frozen_credentials(), "execute-api", self._region).add_auth(request)
        return dict(request.headers.items())


@dataclass(frozen=True)
class Admission:
    """The turn's admission id and delivery credential: what every notes call is reached through."""

    id: str
    credential: str

    def headers(self) -> dict[str, str]:
        return {"X-Admission-Id": self.id, "X-Delivery-Credential": self.credential}


class ApiUnavailable(Exception):
    """Transport failure, a 5xx or a throttled (429) call: worth retrying with backoff."""


Answer = TypeVar("Answer", bound=OutModel)


@dataclass(frozen=True)
class ApiResponse(Generic[Answer]):
    """One answer of the API: `body` is the route's model on a 2xx; otherwise `error` is the envelope (None
    when the body was not one, e.g. a refusal by something in front of the API)."""

    status: int
    body: Answer | None = None
    error: ErrorOut | None = None

    @property
    def error_code(self) -> str | None:
        return None if self.error is None else self.error.error.code


class MemoryApi(Protocol):
    """What the activities need of the automation API (the HTTP client below, or a fake in unit tests)."""

    def recall(self, workspace_id: str, admission_id: str, credential: str) -> ApiResponse[RecallOut]: ...

    def capture(
        self, workspace_id: str, admission_id: str, credential: str, edits: list[Any], base_version: int
    ) -> ApiResponse[CaptureOut]: ...

    def notes_get(self, admission: Admission, session_id: str) -> ApiResponse[NotesOut]: ...

    def notes_put(self, admission: Admission, session_id: str, notes: str) -> ApiResponse[NotesMetaOut]: ...

    def notes_clear(self, admission: Admission, session_id: str) -> ApiResponse[NotesMetaOut]: ...

    def save_entry(
        self, admission: Admission, workspace_id: str, fields: dict[str, Any], idempotency_key: str
    ) -> ApiResponse[EntrySaveOut]: ...

    def read_entry(self, admission: Admission, workspace_id: str, entry_id: str) -> ApiResponse[AgentEntryOut]: ...

    def forget_entry(
        self, admission: Admission, workspace_id: str, entry_id: str, idempotency_key: str
    ) -> ApiResponse[ForgetProposalOut]: ...

    def search_entries(
        self, admission: Admission, workspace_id: str, query: str, k: int
    ) -> ApiResponse[AgentSearchOut]: ...

    def verify_entry(
        self, admission: Admission, workspace_id: str, entry_id: str, revision: int, evidence: list[dict[str, str]]
    ) -> ApiResponse[VerificationOut]: ...


class PurgeApi(Protocol):
    """What the deletion activities need of the automation API (the HTTP client below, or a fake)."""

    def destroy_branch_key(self, workspace_id: str) -> ApiResponse[BranchKeyDestroyedOut]: ...

    def purge_batch(self, workspace_id: str, limit: int, cleared: list[str]) -> ApiResponse[PurgeBatchOut]: ...


class ErasureApi(Protocol):
    """What the erasure activity needs of the automation API (the HTTP client below, or a fake)."""

    def erasure_step(self, step: StepInput) -> ApiResponse[ErasureStepOut]: ...


class ExportApi(Protocol):
    """What the export activities need of the automation API (the HTTP client below, or a fake)."""

    def write_export_file(self, workspace_id: str, export_id: str, file: str) -> ApiResponse[ExportFileOut]: ...

    def finish_export(self, workspace_id: str, export_id: str, too_large: bool) -> ApiResponse[ExportFinishOut]: ...


class ImportApi(Protocol):
    """What the import activities need of the automation API (the HTTP client below, or a fake)."""

    def apply_import_file(self, workspace_id: str, import_id: str, file: str) -> ApiResponse[ImportFileOut]: ...

    def finish_import(self, workspace_id: str, import_id: str) -> ApiResponse[ImportFinishOut]: ...


class ConsolidationApi(Protocol):
    """What the consolidation activities need of the automation API (the HTTP client below, or a fake)."""

    def consolidation_pairs(self, workspace_id: str, run_id: str, trigger: str) -> ApiResponse[PairsOut]: ...

    def propose_consolidation(
        self, workspace_id: str, run_id: str, verdicts: list[dict[str, Any]]
    ) -> ApiResponse[RunCountsOut]: ...

    def finish_consolidation(self, workspace_id: str, run_id: str, counts: dict[str, int]) -> ApiResponse[RunOut]: ...


class HttpApi:
    """One route call: the request signed by `auth`, the answer parsed into the route's model or the error
    envelope. `AutomationApi` below and the MCP server's client of the human turn routes build on it."""

    def __init__(self, base_url: str, auth: Auth, timeout: float = 10.0) -> None:
        self._base = base_url.rstrip("/")
        self._auth = auth
        self._http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=3.0, read=timeout), retries=False, maxsize=8)

    def _call(
        self,
        answer: type[Answer],
        method: str,
        path: str,
        payload: Any = None,
        headers: dict[str, str] | None = None,
    ) -> ApiResponse[Answer]:
        url = self._base + path
        body = b"" if payload is None else json.dumps(payload).encode("utf-8")
        all_headers = {"Content-Type": "application/json", **(headers or {}), **self._auth.headers(method, url, body)}
        try:
            response = self._http.request(method, url, body=body or None, headers=all_headers)
        except urllib3.exceptions.HTTPError as exc:
            raise ApiUnavailable(f"{method} {path.split('?')[0]}: {type(exc).__name__}") from exc
        if response.status >= 500 or response.status == 429:  # the API's throttling decides nothing
            raise ApiUnavailable(f"{method} {path.split('?')[0]}: HTTP {response.status}")
        data = json.loads(response.data) if response.data else {}
        if 200 <= response.status < 300:
            return ApiResponse(response.status, body=answer.model_validate(data))  # not the contract: raises
        return ApiResponse(response.status, error=_envelope(data))


class AutomationApi(HttpApi):
    """The automation routes (IAM): what an agent runtime of the user's does under a delegation."""

    def admit(
        self, conversation_id: str, workspace_id: str, user_id: str, key_session_id: str, idempotency_key: str
    ) -> ApiResponse[AdmissionOut]:
        """A turn admitted for `user_id` under the key session that user opened (docs/architecture.md#delegation)."""
        body = {
            "workspaceId": workspace_id,
            "userId": user_id,
            "keySessionId": key_session_id,
            "idempotencyKey": idempotency_key,
        }
        return self._call(
            AdmissionOut, "POST", f"/v1/automation/conversations/{quote(conversation_id)}/admissions", body
        )

    def recall(self, workspace_id: str, admission_id: str, credential: str) -> ApiResponse[RecallOut]:
        return self._call(
            RecallOut,
            "GET",
            f"/v1/automation/workspaces/{quote(workspace_id)}/memory?purpose=recall",
            headers=Admission(admission_id, credential).headers(),
        )

    def capture(
        self, workspace_id: str, admission_id: str, credential: str, edits: list[Any], base_version: int
    ) -> ApiResponse[CaptureOut]:
        return self._call(
            CaptureOut,
            "PUT",
            f"/v1/automation/workspaces/{quote(workspace_id)}/memory",
            {"admissionId": admission_id, "credential": credential, "edits": edits, "baseVersion": base_version},
            headers={"Idempotency-Key": f"memory:{admission_id}"},
        )

    def notes_get(self, admission: Admission, session_id: str) -> ApiResponse[NotesOut]:
        return self._call(NotesOut, "GET", _notes_path(session_id), headers=admission.headers())

    def notes_put(self, admission: Admission, session_id: str, notes: str) -> ApiResponse[NotesMetaOut]:
        path = _notes_path(session_id)
        return self._call(NotesMetaOut, "PUT", path, {"notes": notes}, headers=admission.headers())

    def notes_clear(self, admission: Admission, session_id: str) -> ApiResponse[NotesMetaOut]:
        return self._call(NotesMetaOut, "DELETE", _notes_path(session_id), headers=admission.headers())

    def save_entry(
        self, admission: Admission, workspace_id: str, fields: dict[str, Any], idempotency_key: str
    ) -> ApiResponse[EntrySaveOut]:
        """`save_memory` through the fence; the same key and body replay the first answer (a retry)."""
        headers = {**admission.headers(), "Idempotency-Key": idempotency_key}
        return self._call(EntrySaveOut, "PUT", _entries_path(workspace_id), fields, headers=headers)

    def list_entries(
        self, admission: Admission, workspace_id: str, limit: int, cursor: str | None, key: str | None
    ) -> ApiResponse[AgentEntriesOut]:
        """The admission's user's entries, a page at a time (`key`: one chain), inside the key session's binding."""
        query = {"limit": limit, **({"cursor": cursor} if cursor else {}), **({"key": key} if key else {})}
        path = f"{_entries_path(workspace_id)}?{urlencode(query)}"
        return self._call(AgentEntriesOut, "GET", path, headers=admission.headers())

    def read_entry(self, admission: Admission, workspace_id: str, entry_id: str) -> ApiResponse[AgentEntryOut]:
        path = f"{_entries_path(workspace_id)}/{quote(entry_id, safe='')}"
        return self._call(AgentEntryOut, "GET", path, headers=admission.headers())

    def forget_entry(
        self, admission: Admission, workspace_id: str, entry_id: str, idempotency_key: str
    ) -> ApiResponse[ForgetProposalOut]:
        """`forget_memory`: a proposal; the same key replays the first answer (a retry)."""
        path = f"{_entries_path(workspace_id)}/{quote(entry_id, safe='')}/forget"
        headers = {**admission.headers(), "Idempotency-Key": idempotency_key}
        return self._call(ForgetProposalOut, "POST", path, headers=headers)

    def verify_entry(
        self, admission: Admission, workspace_id: str, entry_id: str, revision: int, evidence: list[dict[str, str]]
    ) -> ApiResponse[VerificationOut]:
        """`verify_memory`: revision `revision` verified on `evidence`, which the service re-checks."""
        path = f"{_entries_path(workspace_id)}/{quote(entry_id, safe='')}/verify"
        body = {"revision": revision, "evidence": evidence}
        return self._call(VerificationOut, "POST", path, body, headers=admission.headers())

    def search_entries(
        self, admission: Admission, workspace_id: str, query: str, k: int
    ) -> ApiResponse[AgentSearchOut]:
        """`search_memory`: the query travels in the URL's query string, encoded (the route is a GET)."""
        path = f"/v1/automation/workspaces/{quote(workspace_id)}/search?{urlencode({'q': query, 'k': k})}"
        return self._call(AgentSearchOut, "GET", path, headers=admission.headers())

    def destroy_branch_key(self, workspace_id: str) -> ApiResponse[BranchKeyDestroyedOut]:
        path = f"/v1/automation/workspaces/{quote(workspace_id)}/deletion/branch-key"
        return self._call(BranchKeyDestroyedOut, "POST", path, {})

    def purge_batch(self, workspace_id: str, limit: int, cleared: list[str]) -> ApiResponse[PurgeBatchOut]:
        path = f"/v1/automation/workspaces/{quote(workspace_id)}/deletion/batches"
        return self._call(PurgeBatchOut, "POST", path, {"limit": limit, **({"cleared": cleared} if cleared else {})})

    def erasure_step(self, step: StepInput) -> ApiResponse[ErasureStepOut]:
        path = f"/v1/automation/workspaces/{quote(step.workspace_id)}/erasures/{quote(step.erasure_id)}/steps"
        body = {"phase": step.phase.value, **({} if step.after is None else {"after": step.after})}
        return self._call(ErasureStepOut, "POST", path, body)

    def write_export_file(self, workspace_id: str, export_id: str, file: str) -> ApiResponse[ExportFileOut]:
        return self._call(ExportFileOut, "POST", f"{_export_path(workspace_id, export_id)}/files", {"file": file})

    def finish_export(self, workspace_id: str, export_id: str, too_large: bool) -> ApiResponse[ExportFinishOut]:
        path = f"{_export_path(workspace_id, export_id)}/finish"
        return self._call(ExportFinishOut, "POST", path, {"tooLarge": too_large})

    def apply_import_file(self, workspace_id: str, import_id: str, file: str) -> ApiResponse[ImportFileOut]:
        return self._call(ImportFileOut, "POST", f"{_import_path(workspace_id, import_id)}/files", {"file": file})

    def finish_import(self, workspace_id: str, import_id: str) -> ApiResponse[ImportFinishOut]:
        return self._call(ImportFinishOut, "POST", f"{_import_path(workspace_id, import_id)}/finish", {})

    def consolidation_pairs(self, workspace_id: str, run_id: str, trigger: str) -> ApiResponse[PairsOut]:
        return self._call(PairsOut, "POST", f"{_run_path(workspace_id, run_id)}/pairs", {"trigger": trigger})

    def propose_consolidation(
        self, workspace_id: str, run_id: str, verdicts: list[dict[str, Any]]
    ) -> ApiResponse[RunCountsOut]:
        body = {"verdicts": [{to_camel(k): v for k, v in verdict.items()} for verdict in verdicts]}
        return self._call(RunCountsOut, "POST", f"{_run_path(workspace_id, run_id)}/proposals", body)

    def finish_consolidation(self, workspace_id: str, run_id: str, counts: dict[str, int]) -> ApiResponse[RunOut]:
        body = {to_camel(k): v for k, v in counts.items()}
        return self._call(RunOut, "POST", f"{_run_path(workspace_id, run_id)}/finish", body)


def _run_path(workspace_id: str, run_id: str) -> str:
    return f"/v1/automation/workspaces/{quote(workspace_id)}/consolidation/runs/{quote(run_id)}"


def _import_path(workspace_id: str, import_id: str) -> str:
    return f"/v1/automation/workspaces/{quote(workspace_id)}/imports/{quote(import_id)}"


def _export_path(workspace_id: str, export_id: str) -> str:
    return f"/v1/automation/workspaces/{quote(workspace_id)}/exports/{quote(export_id)}"


def _envelope(data: object) -> ErrorOut | None:
    try:
        return ErrorOut.model_validate(data)
    except ValidationError:
        return None


def _entries_path(workspace_id: str) -> str:
    return f"/v1/automation/workspaces/{quote(workspace_id)}/entries"


def _notes_path(session_id: str) -> str:
    return f"/v1/automation/sessions/{quote(session_id)}/notes"
