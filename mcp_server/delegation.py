"""What each tool does over HTTP, under the user's delegated key session.

Every call on the automation routes (recall, search, remember and the entry tools) is its own admission (a
fresh idempotency key) on the server's own conversation, taken and used under one lock: a second admission on a
conversation takes its credential slot (docs/architecture.md#admission), so two interleaved calls would retire
each other. `ask_agent` runs on another conversation (by default the server's own with `-ask` appended), so a
running turn is never superseded by a tool call.
The API's stable errors become `ApiError`s carrying their code; the tools turn them into MCP tool errors.
Only `ask_agent` acts with the person's token (the human turn route); its turn is admitted under the key session,
so what it reads and writes stays inside the session's binding as every other tool's does (decisions/0077).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from workflows.automation import Admission, ApiResponse, ApiUnavailable, AutomationApi, DevAuth, HttpApi, SigV4Auth
from workspace_memory.api.models.automation import (
    AdmissionOut,
    CaptureOut,
    EntrySaveOut,
    ForgetProposalOut,
    RecallOut,
    VerificationOut,
)
from workspace_memory.api.models.base import OutModel
from workspace_memory.api.models.conversations import TurnOut, TurnStarted
from workspace_memory.api.models.entries import AgentEntryOut, AgentSearchOut
from workspace_memory.api.models.entry_pages import AgentEntriesOut
from workspace_memory.kernel import errors
from workspace_memory.kernel.terms import Outcome

from .config import McpConfig

Answer = TypeVar("Answer", bound=OutModel)

POLL_FIRST_SECONDS = 0.2
POLL_MAX_SECONDS = 2.0


class ApiError(Exception):
    """A refused call: the API's stable code and message (never memory text), or a code of this server's, from
    the one registry (`workspace_memory.kernel.errors`)."""

    def __init__(self, code: str, message: str, predicate: str | None = None) -> None:
        super().__init__(f"{code}: {message}" + (f" (predicate: {predicate})" if predicate else ""))
        self.code = code

    @classmethod
    def of(cls, error: type[errors.DomainError], message: str) -> ApiError:
        return cls(error.code, message)


@dataclass(frozen=True)
class BearerAuth:
    """`Authorization: Bearer <token>`: the person's JWT on the human routes (`dev:<user>` locally)."""

    token: str

    def headers(self, method: str, url: str, body: bytes) -> dict[str, str]:  # noqa: ARG002 - signs nothing
        return {"Authorization": f"Bearer {self.token}"}


class UserApi(HttpApi):
    """The human turn routes, called as the person (JWT authorizer's `sub`)."""

    def start_turn(
        self, conversation_id: str, workspace_id: str, message: str, idempotency_key: str, key_session_id: str
    ) -> ApiResponse[TurnStarted]:
        body = {
            "workspaceId": workspace_id,
            "message": message,
            "idempotencyKey": idempotency_key,
            "keySessionId": key_session_id,
        }
        return self._call(TurnStarted, "POST", f"/v1/conversations/{quote(conversation_id)}/turns", body)

    def turn(self, conversation_id: str, turn_id: str) -> ApiResponse[TurnOut]:
        return self._call(TurnOut, "GET", f"/v1/conversations/{quote(conversation_id)}/turns/{quote(turn_id)}")


class RememberOut(CaptureOut):
    """The capture's answer, and whether it may be called remembered: only a committed one is."""

    remembered: bool


class AskOut(TurnOut):
    """The turn's view, with its conversation, and whether a memory edit of it committed."""

    conversation_id: str
    remembered: bool


class Delegation:
    """The user's key session, as the tools use it."""

    def __init__(
        self,
        config: McpConfig,
        automation: AutomationApi,
        user: UserApi | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._config = config
        self._automation = automation
        self._user = user
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep

    def recall(self) -> RecallOut:
        with self._lock:
            admission = self._admit()
            return _body(
                self._automation.recall(self._config.workspace_id, admission.admission_id, admission.credential)
            )

    def search(self, query: str, k: int) -> AgentSearchOut:
        with self._lock:
            return _body(self._automation.search_entries(self._held(), self._config.workspace_id, query, k))

    def save_entry(self, fields: dict[str, Any]) -> EntrySaveOut:
        """`save_memory` under a fresh admission; the idempotency key is fresh too (one call, one save)."""
        with self._lock:
            held = self._held()
            return _body(self._automation.save_entry(held, self._config.workspace_id, fields, _fresh_key()))

    def read_entry(self, entry_id: str) -> AgentEntryOut:
        with self._lock:
            return _body(self._automation.read_entry(self._held(), self._config.workspace_id, entry_id))

    def forget_entry(self, entry_id: str) -> ForgetProposalOut:
        with self._lock:
            held = self._held()
            return _body(self._automation.forget_entry(held, self._config.workspace_id, entry_id, _fresh_key()))

    def verify_entry(self, entry_id: str, revision: int, evidence: list[dict[str, str]]) -> VerificationOut:
        with self._lock:
            held = self._held()
            return _body(self._automation.verify_entry(held, self._config.workspace_id, entry_id, revision, evidence))

    def list_entries(self, limit: int, cursor: str | None = None, key: str | None = None) -> AgentEntriesOut:
        """A page of the entries the key session sees (`key`: the one chain of that key, or none): the service
        leaves out what is outside its binding, so a key outside it is answered as no entry."""
        with self._lock:
            held = self._held()
            return _body(self._automation.list_entries(held, self._config.workspace_id, limit, cursor, key))

    def remember(self, edits: list[dict[str, Any]], base_version: int) -> RememberOut:
        with self._lock:
            admission = self._admit()
            answer = _body(
                self._automation.capture(
                    self._config.workspace_id, admission.admission_id, admission.credential, edits, base_version
                )
            )
        return RememberOut(**dict(answer), remembered=answer.outcome == Outcome.COMMITTED)

    def ask(self, message: str, conversation_id: str | None) -> AskOut:
        user = self._person("ask_agent")
        conv = conversation_id or f"{self._config.conversation_id}-ask"
        if conv == self._config.conversation_id:
            raise ApiError.of(errors.InvalidInput, "that conversation is this server's own tool conversation")
        started = _body(
            user.start_turn(conv, self._config.workspace_id, message, _fresh_key(), self._config.key_session_id)
        )
        deadline = self._clock() + self._config.ask_timeout_seconds
        wait = POLL_FIRST_SECONDS
        while True:
            view = _body(user.turn(conv, started.turn_id))
            if view.status != "running":
                committed = any(o.outcome == Outcome.COMMITTED for o in view.tool_outcomes)
                return AskOut(**dict(view), conversation_id=conv, remembered=committed)
            if self._clock() + wait > deadline:
                raise ApiError.of(
                    errors.TurnTimeout,
                    f"turn {started.turn_id} of conversation {conv} still running after "
                    f"{self._config.ask_timeout_seconds:g} s; it goes on, and GET …/turns/{{turnId}} shows it",
                )
            self._sleep(wait)
            wait = min(wait * 2, POLL_MAX_SECONDS)

    def _person(self, tool: str) -> UserApi:
        if self._user is None:
            raise ApiError.of(errors.UserTokenRequired, f"{tool} acts as the person: set WM_USER_TOKEN to their JWT")
        return self._user

    def _held(self) -> Admission:
        admission = self._admit()
        return Admission(admission.admission_id, admission.credential)

    def _admit(self) -> AdmissionOut:
        c = self._config
        return _body(
            self._automation.admit(c.conversation_id, c.workspace_id, c.user_id, c.key_session_id, uuid.uuid4().hex)
        )


def _body(response: ApiResponse[Answer]) -> Answer:
    if response.body is not None:
        return response.body
    if response.error is None:
        raise ApiError.of(errors.Unavailable, f"HTTP {response.status} without the API's error envelope")
    raise ApiError(response.error.error.code, response.error.error.message, response.error.predicate)


def unavailable(exc: ApiUnavailable) -> str:
    """A failed transport as the text of a tool error: the code, then what failed (a route and a status)."""
    return f"{errors.Unavailable.code}: the memory service did not answer ({exc}); try again"


def _fresh_key() -> str:
    return f"mcp-{uuid.uuid4().hex}"


def build_delegation(config: McpConfig) -> Delegation:
    """The HTTP clients `config` names; `ApiUnavailable` is raised per call, not here."""
    if config.auth == "dev":
        automation = AutomationApi(config.api_url, DevAuth("mcp"))
        user: UserApi | None = UserApi(config.api_url, BearerAuth(f"dev:{config.user_id}"))
    else:
        assert config.region is not None  # the config's own check
        automation = AutomationApi(config.api_url, SigV4Auth(config.region))
        user = None if config.user_token is None else UserApi(config.api_url, BearerAuth(config.user_token))
    return Delegation(config, automation, user)


__all__ = ["ApiError", "ApiUnavailable", "AskOut", "Delegation", "RememberOut", "build_delegation", "unavailable"]
