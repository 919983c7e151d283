"""Activities: all I/O of a turn. Recall, prompt composition and the model call share one activity, so
the memory text stays inside it; tool calls are activities of their own, persisted when they run.

Bad tool arguments and fence refusals become tool results the model sees; only transient failures
(transport errors, 5xx, throttled models) raise, so Temporal retries them with backoff.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.automation import Admission, ApiResponse, ApiUnavailable, MemoryApi
from workflows.payloads import RoundInput, RoundOutput, ToolInput, ToolRun
from workflows.prompt import compose, tools_for
from workflows.providers.base import ModelError, ModelProvider, ModelRequest, ToolResult
from workspace_memory.turn_contract import RoundReceipt, ToolOutcome

NO_ADMISSION_BLOCK = "Workspace memory not provided because this turn's admission is not valid."
NOTES_UNAVAILABLE = "Working notes persistence unavailable right now; nothing was saved."

OUTCOME_TEXT = {
    "committed": "Remembered (memory version {version}).",
    "proposal": "Not remembered: the workspace memory is read-only for the assistant; the change was "
    "returned as a proposal for a member to apply.",
    "noop": "Nothing to change: memory is off for this turn or already says this.",
    "conflict": "Not remembered: the memory changed since this turn read it (now version {version}); the "
    "change was returned as a proposal against the newer text, which was left untouched.",
    "refused": "Not remembered: the memory fence refused the edit ({predicate}).",
}


class TurnActivities:
    def __init__(self, api: MemoryApi, provider: ModelProvider) -> None:
        self._api = api
        self._provider = provider

    @activity.defn(name="model_round")
    def model_round(self, data: RoundInput) -> RoundOutput:
        turn = data.turn
        recalled = self._retrying(self._api.recall, turn.workspace_id, turn.admission_id, turn.credential)
        if recalled.status == 200:
            block, receipt = (
                recalled.body["block"],
                RoundReceipt(round=data.round, status=recalled.body["status"], revision=recalled.body.get("revision")),
            )
            memory_write = str(recalled.body.get("memoryWrite", "none"))
        else:
            block, receipt = NO_ADMISSION_BLOCK, RoundReceipt(round=data.round, status="no_access")
            memory_write = "none"
        notes, notes_ok = self._read_notes(data)
        # Tools follow authority: a write tool only when this turn could commit or propose with it now.
        tools = tools_for(memory_write=memory_write, notes=turn.session_id is not None)
        prompt = compose(block, notes, tools, notes_unavailable=not notes_ok)
        request = ModelRequest(system_prompt=prompt, messages=data.messages, tools=tools)
        try:
            response = self._provider.complete(request)
        except ModelError as exc:
            raise ApplicationError(f"model call failed: {exc}", non_retryable=not exc.retryable) from exc
        return RoundOutput(response=response, receipt=receipt)

    def _read_notes(self, data: RoundInput) -> tuple[str, bool]:
        """The session's notes, and whether they could be read (a store failure never fails the turn)."""
        session_id = data.turn.session_id
        if session_id is None:
            return "", True
        try:
            found = self._api.notes_get(_admission(data), session_id)
        except ApiUnavailable:
            return "", False
        return (str(found.body.get("notes", "")), True) if found.status == 200 else ("", False)

    @staticmethod
    def _retrying(call: Any, *args: Any) -> ApiResponse:
        try:
            response: ApiResponse = call(*args)
        except ApiUnavailable as exc:
            raise ApplicationError(str(exc), type="ApiUnavailable") from exc  # retried with backoff
        return response

    @activity.defn(name="remember_in_memory")
    def remember_in_memory(self, data: ToolInput) -> ToolRun:
        edits = data.call.arguments.get("edits")
        if not isinstance(edits, list) or not edits:
            return _error(data, "edits must be a non-empty list of add/replace/remove edits", "invalid")
        turn = data.turn
        response = self._retrying(
            self._api.capture, turn.workspace_id, turn.admission_id, turn.credential, edits, data.base_version
        )
        if response.status != 200:
            problems = response.body.get("problems") or []
            detail = ", ".join(f"edit {p['index']}: {p['reason']}" for p in problems) or response.error_code
            return _error(data, f"Not remembered: the edits were rejected ({detail}).", "invalid")
        body = response.body
        outcome = body["outcome"]
        text = OUTCOME_TEXT[outcome].format(version=body.get("version"), predicate=body.get("predicate"))
        return ToolRun(
            result=ToolResult(
                tool_call_id=data.call.id, name=data.call.name, content=text, is_error=outcome != "committed"
            ),
            outcome=ToolOutcome(
                round=data.round,
                tool=data.call.name,
                ok=outcome == "committed",
                outcome=outcome,
                version=body.get("version"),
                predicate=body.get("predicate"),
            ),
        )

    @activity.defn(name="working_notes_get")
    def working_notes_get(self, data: ToolInput) -> ToolRun:
        if data.turn.session_id is None:
            return _error(data, "No session: working notes are not available in this turn.", "no_session")
        try:
            found = self._api.notes_get(_admission(data), data.turn.session_id)
        except ApiUnavailable:
            return _error(data, "Working notes unavailable right now.", "unavailable")
        notes = str(found.body.get("notes", ""))
        return _ok(data, notes or "(no working notes)", "read")

    @activity.defn(name="working_notes_update")
    def working_notes_update(self, data: ToolInput) -> ToolRun:
        notes = data.call.arguments.get("notes")
        if not isinstance(notes, str):
            return _error(data, "notes must be a string", "invalid")
        return self._write_notes(data, notes)

    @activity.defn(name="working_notes_clear")
    def working_notes_clear(self, data: ToolInput) -> ToolRun:
        return self._write_notes(data, "")

    def _write_notes(self, data: ToolInput, notes: str) -> ToolRun:
        """Persisted now, at tool execution: a turn that fails or is cancelled later keeps them."""
        session_id = data.turn.session_id
        if session_id is None:
            return _error(data, "No session: working notes are not available in this turn.", "no_session")
        try:
            admission = _admission(data)
            saved = (
                self._api.notes_clear(admission, session_id)
                if notes == ""
                else self._api.notes_put(admission, session_id, notes)
            )
        except ApiUnavailable:
            return _error(data, NOTES_UNAVAILABLE, "unavailable")
        if saved.status == 413:
            return _error(
                data, "Not saved: notes are over the 32 KiB cap; the existing notes are unchanged.", "too_large"
            )
        if saved.status != 200:
            return _error(data, f"Not saved ({saved.error_code}); the existing notes are unchanged.", "refused")
        verb = "cleared" if notes == "" else "saved"
        return _ok(data, f"Working notes {verb} (revision {saved.body['revision']}).", verb)


def _admission(data: RoundInput | ToolInput) -> Admission:
    return Admission(data.turn.admission_id, data.turn.credential)


def _ok(data: ToolInput, text: str, outcome: str) -> ToolRun:
    return ToolRun(
        result=ToolResult(tool_call_id=data.call.id, name=data.call.name, content=text),
        outcome=ToolOutcome(round=data.round, tool=data.call.name, ok=True, outcome=outcome),
    )


def _error(data: ToolInput, text: str, outcome: str) -> ToolRun:
    return ToolRun(
        result=ToolResult(tool_call_id=data.call.id, name=data.call.name, content=text, is_error=True),
        outcome=ToolOutcome(round=data.round, tool=data.call.name, ok=False, outcome=outcome),
    )
