"""Automation routes (IAM): admissions, recall, capture, working notes and the agent's entry tools (and the entry
list), for agent runtimes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import (
    automation_caller,
    build_resolver,
    lambda_entry,
    refuse_unknown_parameters,
    respond,
)
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
from workspace_memory.api.models.entries import AgentEntryOut, AgentSearchOut
from workspace_memory.api.models.entry_pages import AgentEntriesOut
from workspace_memory.api.schemas.agent_entries import SaveEntry, VerifyEntry
from workspace_memory.api.schemas.turns import Admit, Capture, PutNotes
from workspace_memory.bootstrap import services
from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.kernel.terms import SEARCH_DEFAULT_K, SEARCH_MAX_K

if TYPE_CHECKING:
    from workspace_memory.turns.notes import Notebook, NotesService

app = build_resolver()


@app.post(
    "/v1/automation/conversations/<conv>/admissions",
    summary="Admit a turn for a user (agent runtime)",
    description=(
        "An agent runtime (IAM-signed) admits a turn for `userId` under a live key session that user opened in the "
        "workspace. Freezes the authority the turn runs under for 15 minutes and issues the delivery credential "
        "later calls carry; retires every older turn of the conversation. 201, or 200 with the same admission for "
        "a resend with the same `idempotencyKey`."
    ),
)
def admit(conv: str, body: Annotated[Admit, Body()]) -> Response[AdmissionOut]:
    automation_caller(app)
    admitted = services().admission.admit_for_runtime(body.request(conv))
    return respond(200 if admitted.replayed else 201, AdmissionOut.of(admitted))


@app.get(
    "/v1/automation/workspaces/<ws>/memory",
    summary="Recall memory before a model call",
    description=(
        "The framed memory block for the admission's next model call (or a one-line reason it is not provided), "
        "and what a write could do now (`memoryWrite`). Needs the admission's `memory:read`. Records a receipt on "
        "the conversation; changes no memory."
    ),
)
def recall(
    ws: str,
    purpose: Annotated[str, Query()],
    admission_id: Annotated[str, Header(alias="x-admission-id", max_length=1024)],
    credential: Annotated[str, Header(alias="x-delivery-credential", max_length=200)],
) -> Response[RecallOut]:
    automation_caller(app)
    if purpose != "recall":
        raise InvalidInput("purpose must be 'recall'")
    return respond(200, RecallOut.of(services().recall.recall(ws, admission_id, credential)))


@app.put(
    "/v1/automation/workspaces/<ws>/memory",
    summary="Capture an agent's edits to the document",
    description=(
        "One to five single-line edits on `baseVersion`, under the admission. In `auto` they commit through the "
        "fence (a receipt), in `read_only` they come back as a proposal, in `off` nothing; a moved head answers a "
        "proposal on the newer text. Redacted first. Needs `memory:write`; idempotent by `Idempotency-Key: "
        "memory:<admissionId>`."
    ),
)
def capture(
    ws: str,
    body: Annotated[Capture, Body()],
    idempotency_key: Annotated[str | None, Header(alias="idempotency-key", max_length=1100)] = None,
) -> Response[CaptureOut]:
    automation_caller(app)
    result = services().capture.capture(
        ws, body.admission_id, body.credential, body.edits, body.base_version, idempotency_key
    )
    return respond(200, CaptureOut.of(result))


AdmissionIdHeader = Annotated[str | None, Header(alias="x-admission-id", max_length=1024)]
CredentialHeader = Annotated[str | None, Header(alias="x-delivery-credential", max_length=200)]


def _open_notes(sid: str, admission_id: str | None, credential: str | None) -> tuple[NotesService, Notebook]:
    """The automation caller checked, the notes service and the notebook of session `sid` the admission opens."""
    automation_caller(app)
    notes_service = services().notes
    return notes_service, notes_service.open(admission_id, credential, sid)


@app.get(
    "/v1/automation/sessions/<sid>/notes",
    summary="Read the turn's working notes",
    description=(
        "The notes of the admission's own session notebook and their revision. Needs the `notes` scope and a "
        "session on the admission. Changes nothing."
    ),
)
def get_notes(
    sid: str, admission_id: AdmissionIdHeader = None, credential: CredentialHeader = None
) -> Response[NotesOut]:
    notes_service, notebook = _open_notes(sid, admission_id, credential)
    return respond(200, NotesOut.with_text(notes_service.get(notebook)))


@app.put(
    "/v1/automation/sessions/<sid>/notes",
    summary="Write the turn's working notes",
    description=(
        "Replaces the notebook's notes (at most 32 KiB, redacted, never truncated). With `X-Expected-Revision` it "
        "is compare-and-set (409 when not current); without, the tool's write with one bounded retry. Needs the "
        "`notes` scope."
    ),
)
def put_notes(
    sid: str,
    body: Annotated[PutNotes, Body()],
    expected: Annotated[int | None, Header(alias="x-expected-revision", ge=0)] = None,
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
) -> Response[NotesMetaOut]:
    """With X-Expected-Revision: compare-and-set. Without: the tool's write, with one bounded retry."""
    notes_service, notebook = _open_notes(sid, admission_id, credential)
    notes = (
        notes_service.update(notebook, body.notes)
        if expected is None
        else notes_service.put(notebook, body.notes, expected)
    )
    return respond(200, NotesMetaOut.of(notes))


@app.delete(
    "/v1/automation/sessions/<sid>/notes",
    summary="Clear the turn's working notes",
    description=("Writes an empty revision of the admission's session notebook. Needs the `notes` scope."),
)
def clear_notes(
    sid: str, admission_id: AdmissionIdHeader = None, credential: CredentialHeader = None
) -> Response[NotesMetaOut]:
    notes_service, notebook = _open_notes(sid, admission_id, credential)
    return respond(200, NotesMetaOut.of(notes_service.clear(notebook)))


@app.put(
    "/v1/automation/workspaces/<ws>/entries",
    summary="Save an entry for the admission's user (`save_memory`)",
    description=(
        "An agent's entry write under the admission: through the fence in `auto`, held as a candidate for people "
        "in `read_only`, nothing in `off`. A rule must quote the user's own words. Needs `memory:write`; "
        "idempotent by `Idempotency-Key` (another body with the same key: 409); at most 120 agent writes per user, "
        "workspace and hour (429)."
    ),
)
def agent_save_entry(
    ws: str,
    body: Annotated[SaveEntry, Body()],
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
    idempotency_key: Annotated[str | None, Header(alias="idempotency-key", max_length=200)] = None,
) -> Response[EntrySaveOut]:
    """`save_memory`: through the fence in `auto`, a candidate in `read_only`, nothing in `off`."""
    from workspace_memory.entries.model import Draft, EntryText, Source

    automation_caller(app)
    sources = tuple(Source(s.kind, s.ref, s.sha256, s.locator) for s in body.sources)
    text = EntryText(body.title, body.summary, body.body, sources, body.key)
    draft = Draft(body.type, text, body.scope, body.agent)
    raw = body.model_dump(mode="json", by_alias=True, exclude_none=True)
    result = services().agent_entries.save(ws, admission_id, credential, draft, body.quote, raw, idempotency_key)
    return respond(200, EntrySaveOut.of(result))


@app.get(
    "/v1/automation/workspaces/<ws>/entries",
    summary="List entries for the admission's user",
    description=(
        "The active entries the admission's user may see, a page at a time (`limit` 1 to 100, default 20; "
        "`nextCursor`), optionally the one chain of `key`; under the checks of `read_memory`, so a bound key "
        "session lists only what is inside its binding. Entries whose cited source is gone are left out and "
        "counted (`hidden`). An undeclared query parameter is 400 `UNKNOWN_PARAMETER`. Changes nothing."
    ),
)
def agent_list_entries(
    ws: str,
    key: Annotated[str | None, Query(max_length=300)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
) -> Response[AgentEntriesOut]:
    """The list an agent runtime pages through (the MCP server's `list_entries` and the memory tool's key
    lookups): the admission's user's entries, inside the key session's binding (`memory:read`)."""
    automation_caller(app)
    refuse_unknown_parameters(app, frozenset({"key", "limit", "cursor"}))
    page = services().agent_entries.list_entries(ws, admission_id, credential, key, limit, cursor)
    return respond(200, AgentEntriesOut.of(page))


@app.get(
    "/v1/automation/workspaces/<ws>/entries/<entry_id>",
    summary="Read an entry for the admission's user (`read_memory`)",
    description=(
        "One entry the admission's user may see, while the admission still has access. Needs `memory:read`; memory "
        "`off` is 403 `MEMORY_OFF`. Changes nothing."
    ),
)
def agent_read_entry(
    ws: str, entry_id: str, admission_id: AdmissionIdHeader = None, credential: CredentialHeader = None
) -> Response[AgentEntryOut]:
    """`read_memory`: one entry the admission's user may see (`memory:read`)."""
    automation_caller(app)
    return respond(200, AgentEntryOut.of(services().agent_entries.read(ws, admission_id, credential, entry_id)))


@app.post(
    "/v1/automation/workspaces/<ws>/entries/<entry_id>/forget",
    summary="Propose forgetting an entry (`forget_memory`)",
    description=(
        "Holds a forget proposal (a candidate of kind `forget`) for a member with write right on the entry's scope "
        "to decide; never the forget itself, and nothing in `off`. Needs `memory:write`; idempotent by "
        "`Idempotency-Key`."
    ),
)
def agent_forget_entry(
    ws: str,
    entry_id: str,
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
    idempotency_key: Annotated[str | None, Header(alias="idempotency-key", max_length=200)] = None,
) -> Response[ForgetProposalOut]:
    """`forget_memory`: a proposal (a candidate of kind `forget`) in `read_only` and `auto`, nothing in `off`;
    a member with write right on the entry's scope decides it. Never the forget itself."""
    automation_caller(app)
    result = services().agent_entries.forget(ws, admission_id, credential, entry_id, idempotency_key)
    return respond(200, ForgetProposalOut.of(result))


@app.post(
    "/v1/automation/workspaces/<ws>/entries/<entry_id>/verify",
    summary="Verify an entry on evidence (`verify_memory`)",
    description=(
        "Marks revision `revision`, the current one, as still holding (`verifiedAt`, `verifiedBy` the admission's "
        "user, `verifiedEvidence`) on 1 to 5 cited sources the agent read, each re-checked now against its "
        "`sha256` (a source that changed or cannot be read is 409 `EVIDENCE_NOT_CURRENT`, with each one's state). "
        "Through the fence in `auto`; `read_only` is refused (`policy`), `off` does nothing. Never on a pinned "
        "entry (409 `ENTRY_PINNED`); a moved head is 409 `STALE_REVISION`. Needs `memory:write`; rate limited "
        "with the agent's writes (429)."
    ),
)
def agent_verify_entry(
    ws: str,
    entry_id: str,
    body: Annotated[VerifyEntry, Body()],
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
) -> Response[VerificationOut]:
    """`verify_memory`: an agent's verification, on evidence the service re-checks."""
    from workspace_memory.entries.model import Source

    automation_caller(app)
    evidence = [Source(s.kind, s.ref, s.sha256, s.locator) for s in body.evidence]
    result = services().agent_entries.verify(ws, admission_id, credential, entry_id, body.revision, evidence)
    return respond(200, VerificationOut.of(result))


@app.get(
    "/v1/automation/workspaces/<ws>/search",
    summary="Search entries for the admission's user (`search_memory`)",
    description=(
        "The admission's user's best `k` entries for `q` (1 B to 1 KiB; `k` 1 to 20, default 5), best first, never "
        "a body; under the checks of `read_memory`. An undeclared query parameter is 400 `UNKNOWN_PARAMETER`. "
        "Changes nothing."
    ),
)
def agent_search(
    ws: str,
    q: Annotated[str, Query()],
    k: Annotated[int, Query(ge=1, le=SEARCH_MAX_K)] = SEARCH_DEFAULT_K,
    admission_id: AdmissionIdHeader = None,
    credential: CredentialHeader = None,
) -> Response[AgentSearchOut]:
    """`search_memory`: the admission's user's best `k` entries for `q` (`memory:read`), with the checks of
    `read_memory`. The query is at most 1 KiB of UTF-8 and not blank; `k` 1-20 (default 5)."""
    automation_caller(app)
    refuse_unknown_parameters(app, frozenset({"q", "k"}))
    return respond(200, AgentSearchOut.of(services().agent_entries.search(ws, admission_id, credential, q, k)))


handler: Any = lambda_entry(app)
