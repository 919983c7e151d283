"""The JSON every response model is on the wire, pinned byte for byte: field names, order, which absent
fields are omitted and which are sent as null. Each model goes through a route declared `Response[Model]`,
so this pins what powertools' serializer makes of it, and parses back into the same model (as the worker's
client parses the automation routes' answers)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from aws_lambda_powertools.event_handler import Response

from scripts.localstack.gateway import FakeContext
from tests.unit.fakes import get_event
from workspace_memory.api.errors import error_envelope, error_of
from workspace_memory.api.http import build_resolver, error_response, respond
from workspace_memory.api.models.automation import (
    AdmissionOut,
    CaptureOut,
    EntrySaveOut,
    NotesMetaOut,
    NotesOut,
    RecallOut,
)
from workspace_memory.api.models.base import OutModel
from workspace_memory.api.models.candidates import CandidateOut
from workspace_memory.api.models.conversations import ReceiptsOut, TurnOut, TurnStarted
from workspace_memory.api.models.document import CommitOut, DocumentOut, HistoryOut, VersionContentOut
from workspace_memory.api.models.entries import AgentSearchOut, EntryWritten, SearchOut
from workspace_memory.api.models.entry_pages import EntriesOut
from workspace_memory.api.models.envelope import ErrorOut
from workspace_memory.api.models.policy import PolicyOut
from workspace_memory.api.models.workspaces import AiOut, HealthOut, KeySessionOut, MemberOut, WorkspaceCreated
from workspace_memory.document.commit import Commit
from workspace_memory.document.edits import EditProblem
from workspace_memory.document.policy import Mode, Policy
from workspace_memory.document.service import DocumentView, HistoryPage
from workspace_memory.document.versions import VersionInfo
from workspace_memory.entries.agent_results import SaveResult
from workspace_memory.entries.candidate_diff import candidate_diff
from workspace_memory.entries.index import Budget
from workspace_memory.entries.model import CandidateView, Draft, EntryText, Page, PossibleConflict, Source, Written
from workspace_memory.kernel import errors, loopback
from workspace_memory.kernel.terms import (
    CandidateKind,
    CandidateStatus,
    CitationKind,
    CitationState,
    EntryScope,
    EntryType,
)
from workspace_memory.search.entry_search import Found, SearchResult
from workspace_memory.store.turn_records import CaptureReceipt
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import CaptureResult, InvalidEdits, Outcome, Proposal
from workspace_memory.turns.notes import Notes, NotesConflict, NotesTooLarge
from workspace_memory.turns.recall import MemoryWrite, Recall, RecallReceipt, RecallStatus, ReceiptsPage
from workspace_memory.turns.service import StartedTurn
from workspace_memory.turns.turn_contract import RoundReceipt, ToolOutcome, TurnProposal, TurnView
from workspace_memory.workspaces.access import Role, ShareType, Workspace
from workspace_memory.workspaces.keysessions import KeySession, Scope

pytestmark = pytest.mark.unit

AT = "2027-01-15T08:00:00.000Z"
SHA = "ab" * 32
ADM = "adm_x.eyJjIjoiYyJ9"
SAVED = VersionInfo(version=3, op="save", author="olivia", created_at=AT, bytes=12, ciphertext_sha256=SHA)
UNDONE = VersionInfo(4, "undo", "olivia", AT, 12, SHA, restored_from=2)
RECEIPT_JSON = json.dumps(
    {"admissionId": ADM, "version": 5, "ciphertextSha256": SHA, "bytes": 20, "committedAt": AT}, separators=(",", ":")
)
RECEIPT = CaptureReceipt(ADM, 5, SHA, 20, AT)
PROPOSAL = Proposal([{"op": "add", "line": "- x", "heading": "## D"}, {"op": "remove", "line": "- y"}], 4, 1)
TURN = TurnView(
    conversation_id="conv-1",
    status="running",
    rounds=2,
    tool_outcomes=[
        ToolOutcome(round=1, tool="remember_in_memory", ok=True, outcome="committed", version=5),
        ToolOutcome(round=1, tool="remember_in_memory", ok=False, outcome="refused", predicate="policy"),
        ToolOutcome(round=2, tool="working_notes_get", ok=True, outcome="read"),
    ],
    receipts=[RoundReceipt(round=1, status=RecallStatus.OK, revision=4), RoundReceipt(round=2, status="no_access")],
    proposals=[TurnProposal(round=2, edits=[{"op": "add", "line": "- x"}], base_version=4, clear_generation=1)],
)

CASES: list[tuple[str, OutModel, str]] = [
    ("health", HealthOut(), '{"status":"ok"}'),
    ("workspace created", WorkspaceCreated(workspace_id="ws_1"), '{"workspaceId":"ws_1"}'),
    ("member", MemberOut(user_id="eddie", role=Role.EDITOR), '{"userId":"eddie","role":"editor"}'),
    (
        "workspace AI",
        AiOut.of(Workspace("ws_1", "olivia", ShareType.SHARED, ai_enabled=True, consent_revision=2)),
        '{"enabled":true,"consentRevision":2}',
    ),
    (
        "key session (scopes sorted)",
        KeySessionOut.of(KeySession("ks_1", "ws_1", "olivia", 1_800_000_600.0, frozenset(Scope))),
        '{"keySessionId":"ks_1","expiresAt":"2027-01-15T08:10:00.000Z",'
        '"scopes":["memory:read","memory:write","notes"]}',
    ),
    (
        "policy",
        PolicyOut.of(Policy(Mode.READ_ONLY, 0, 0)),
        '{"mode":"read_only","policyRevision":0,"clearGeneration":0}',
    ),
    (
        "document never saved (nulls sent)",
        DocumentOut.of(DocumentView(0, "", 0, True, None, None)),
        '{"version":0,"content":"","bytes":0,"recallEligible":true,"updatedAt":null,"updatedBy":null}',
    ),
    (
        "save commit (restoredFrom, clearGeneration omitted)",
        CommitOut.of(Commit(SAVED)),
        f'{{"version":3,"op":"save","bytes":12,"ciphertextSha256":"{SHA}","createdAt":"{AT}"}}',
    ),
    (
        "clear commit",
        CommitOut.of(Commit(VersionInfo(5, "clear", "olivia", AT, 0, SHA), clear_generation=1)),
        f'{{"version":5,"op":"clear","bytes":0,"ciphertextSha256":"{SHA}","createdAt":"{AT}","clearGeneration":1}}',
    ),
    (
        "undo commit",
        CommitOut.of(Commit(UNDONE)),
        f'{{"version":4,"op":"undo","bytes":12,"ciphertextSha256":"{SHA}","createdAt":"{AT}","restoredFrom":2}}',
    ),
    (
        "history (nextCursor null)",
        HistoryOut.of(HistoryPage([UNDONE, SAVED], None)),
        f'{{"versions":[{{"version":4,"op":"undo","author":"olivia","createdAt":"{AT}","bytes":12,'
        f'"ciphertextSha256":"{SHA}","restoredFrom":2}},{{"version":3,"op":"save","author":"olivia",'
        f'"createdAt":"{AT}","bytes":12,"ciphertextSha256":"{SHA}"}}],"nextCursor":null}}',
    ),
    (
        "one version with its content (last)",
        VersionContentOut.with_content(UNDONE, "# M\n"),
        f'{{"version":4,"op":"undo","author":"olivia","createdAt":"{AT}","bytes":12,"ciphertextSha256":"{SHA}",'
        '"restoredFrom":2,"content":"# M\\n"}',
    ),
    ("turn started", TurnStarted.of(StartedTurn("turn-1", ADM)), f'{{"turnId":"turn-1","admissionId":"{ADM}"}}'),
    (
        "turn (answer null; outcomes omit absent version/predicate; receipts send revision null)",
        TurnOut.of("turn-1", TURN),
        '{"turnId":"turn-1","status":"running","answer":null,"rounds":2,"toolOutcomes":['
        '{"round":1,"tool":"remember_in_memory","ok":true,"outcome":"committed","version":5},'
        '{"round":1,"tool":"remember_in_memory","ok":false,"outcome":"refused","predicate":"policy"},'
        '{"round":2,"tool":"working_notes_get","ok":true,"outcome":"read"}],'
        '"receipts":[{"round":1,"status":"ok","revision":4},{"round":2,"status":"no_access","revision":null}],'
        '"proposals":[{"round":2,"edits":[{"op":"add","line":"- x"}],"baseVersion":4,"clearGeneration":1}]}',
    ),
    (
        "receipts (turnId and revision null)",
        ReceiptsOut.of(
            ReceiptsPage(
                [
                    RecallReceipt(ADM, None, AT, RecallStatus.NO_ACCESS, None),
                    RecallReceipt(ADM, "turn-1", AT, RecallStatus.OK, 4),
                ],
                "c1",
            )
        ),
        f'{{"receipts":[{{"admissionId":"{ADM}","turnId":null,"at":"{AT}","status":"no_access","revision":null}},'
        f'{{"admissionId":"{ADM}","turnId":"turn-1","at":"{AT}","status":"ok","revision":4}}],"nextCursor":"c1"}}',
    ),
    (
        "admission",
        AdmissionOut(admission_id=ADM, credential="cred", expires_at=AT, mode=Mode.AUTO),
        f'{{"admissionId":"{ADM}","credential":"cred","expiresAt":"{AT}","mode":"auto"}}',
    ),
    (
        "recall (revision null sent)",
        RecallOut.of(Recall(RecallStatus.UNAVAILABLE, None, "Workspace memory not provided.", ADM, AT)),
        '{"trust":"untrusted","evidence":false,"status":"unavailable","revision":null,'
        '"block":"Workspace memory not provided.","memoryWrite":"none"}',
    ),
    (
        "recall ok",
        RecallOut.of(Recall(RecallStatus.OK, 4, "<<<block", ADM, AT, MemoryWrite.COMMIT)),
        '{"trust":"untrusted","evidence":false,"status":"ok","revision":4,"block":"<<<block","memoryWrite":"commit"}',
    ),
    (
        "agent search (untrusted, never evidence)",
        AgentSearchOut(results=[], hidden=0),
        '{"trust":"untrusted","evidence":false,"results":[],"hidden":0}',
    ),
    (
        "a search whose cited sources left one out and changed another",
        SearchOut.of(Found([SearchResult("e_1", 2, "t", "s", 0.5, source_state=CitationState.CHANGED)], hidden=1)),
        '{"results":[{"entryId":"e_1","revision":2,"title":"t","summary":"s","score":0.5,"sourceState":"changed"}],'
        '"hidden":1}',
    ),
    ("capture noop (all absent omitted)", CaptureOut.of(CaptureResult(Outcome.NOOP)), '{"outcome":"noop"}'),
    (
        "capture refused",
        CaptureOut.of(CaptureResult(Outcome.REFUSED, predicate=Predicate.KEY_SESSION)),
        '{"outcome":"refused","predicate":"key_session"}',
    ),
    (
        "an entry list's first page, with recall's budgets",
        EntriesOut.of(Page([], None), (Budget(1, 120, 2000, None, 0), Budget(100, 7990, 8000, 100, 4))),
        '{"entries":[],"nextCursor":null,"budgets":{"rules":{"lines":1,"bytes":120,"maxBytes":2000,"leftOut":0,'
        '"truncated":false},"index":{"lines":100,"bytes":7990,"maxBytes":8000,"maxLines":100,"leftOut":4,'
        '"truncated":true}}}',
    ),
    ("an entry history page", EntriesOut.of(Page([], "c2")), '{"entries":[],"nextCursor":"c2"}'),
    (
        "an entry list's later page, with what its citations hid",
        EntriesOut.of(Page([], "c2", hidden=2)),
        '{"entries":[],"nextCursor":"c2","hidden":2}',
    ),
    (
        "capture committed",
        CaptureOut.of(CaptureResult(Outcome.COMMITTED, version=5, receipt=RECEIPT)),
        f'{{"outcome":"committed","version":5,"receipt":{RECEIPT_JSON}}}',
    ),
    (
        "capture replayed",
        CaptureOut.of(CaptureResult(Outcome.COMMITTED, version=5, receipt=RECEIPT, replayed=True, current=True)),
        f'{{"outcome":"committed","version":5,"receipt":{RECEIPT_JSON},"replayed":true,"current":true}}',
    ),
    (
        "capture replayed, its version no longer the head",
        CaptureOut.of(CaptureResult(Outcome.COMMITTED, version=5, receipt=RECEIPT, replayed=True, current=False)),
        f'{{"outcome":"committed","version":5,"receipt":{RECEIPT_JSON},"replayed":true,"current":false}}',
    ),
    (
        "capture conflict with a proposal",
        CaptureOut.of(CaptureResult(Outcome.CONFLICT, version=4, predicate=Predicate.HEAD, proposal=PROPOSAL)),
        '{"outcome":"conflict","version":4,"predicate":"head","proposal":{"edits":[{"op":"add","line":"- x",'
        '"heading":"## D"},{"op":"remove","line":"- y"}],"baseVersion":4,"clearGeneration":1}}',
    ),
    (
        "forget candidate (body, key and diff null)",
        CandidateOut.of(
            CandidateView(
                "ec1",
                1,
                CandidateStatus.PENDING,
                EntryScope.WORKSPACE,
                EntryType.FACT,
                None,
                None,
                "en1",
                2,
                "u1",
                AT,
                CandidateKind.FORGET,
            )
        ),
        '{"candidateId":"ec1","revision":1,"status":"pending","kind":"forget","scope":"workspace","type":"fact",'
        f'"title":null,"summary":null,"entryId":"en1","baseRevision":2,"proposedBy":"u1","createdAt":"{AT}",'
        '"body":null,"key":null,"sources":[],"diff":null,"evidence":null,"possibleConflicts":[]}',
    ),
    (
        "save candidate superseding through a key (its diff)",
        CandidateOut.of(
            CandidateView(
                "ec2",
                1,
                CandidateStatus.PENDING,
                EntryScope.WORKSPACE,
                EntryType.FACT,
                "T",
                "new",
                "en1",
                1,
                "u1",
                AT,
                body="b2",
                key="a/b",
                sources=(Source(CitationKind.ENTRY, "en0", "ab", "l"),),
                diff=candidate_diff(
                    "en1",
                    1,
                    True,
                    EntryType.RULE,
                    EntryText("T", "old", "b1"),
                    Draft(EntryType.FACT, EntryText("T", "new", "b2")),
                ),
                possible_conflicts=(PossibleConflict("en7", 3),),
            )
        ),
        '{"candidateId":"ec2","revision":1,"status":"pending","kind":"save","scope":"workspace","type":"fact",'
        f'"title":"T","summary":"new","entryId":"en1","baseRevision":1,"proposedBy":"u1","createdAt":"{AT}",'
        '"body":"b2","key":"a/b","sources":[{"kind":"entry","ref":"en0","sha256":"ab","locator":"l"}],'
        '"diff":{"entryId":"en1","revision":1,"current":true,"type":"rule","title":"T","summary":"old","body":"b1",'
        '"changed":["type","summary","body"],"bodyDiff":"--- en1@1\\n+++ candidate\\n@@ -1 +1 @@\\n-b1\\n+b2"},'
        '"evidence":null,"possibleConflicts":[{"entryId":"en7","revision":3}]}',
    ),
    (
        "entry written with its possible conflicts (ids and revisions only)",
        EntryWritten.of(Written("en1", 2, possible_conflicts=(PossibleConflict("en7", 3),))),
        '{"entryId":"en1","revision":2,"possibleConflicts":[{"entryId":"en7","revision":3}]}',
    ),
    (
        "accepted candidate written (not checked: no possibleConflicts)",
        EntryWritten.of(Written("en1", 1)),
        '{"entryId":"en1","revision":1}',
    ),
    (
        "agent save held for review (possible conflicts)",
        EntrySaveOut.of(
            SaveResult(Outcome.PROPOSAL, candidate_id="ec1", possible_conflicts=(PossibleConflict("en7", 3),))
        ),
        '{"outcome":"proposal","candidateId":"ec1","possibleConflicts":[{"entryId":"en7","revision":3}]}',
    ),
    (
        "agent save committed (no conflicts: an empty list)",
        EntrySaveOut.of(SaveResult(Outcome.COMMITTED, "en1", 1)),
        '{"outcome":"committed","entryId":"en1","revision":1,"possibleConflicts":[]}',
    ),
    (
        "notes read (updatedAt null sent)",
        NotesOut.with_text(Notes("", 0, 0, None)),
        '{"revision":0,"bytes":0,"updatedAt":null,"notes":""}',
    ),
    (
        "notes written (no text)",
        NotesMetaOut.of(Notes("n", 1, 1, AT)),
        f'{{"revision":1,"bytes":1,"updatedAt":"{AT}"}}',
    ),
]


def _served(model: OutModel) -> dict[str, Any]:
    """The model answered by a route declared `-> Response[<its class>]`, as the handlers declare theirs."""
    app = build_resolver()

    def route() -> Response[Any]:
        return respond(200, model)

    route.__annotations__["return"] = Response[type(model)]  # type: ignore[misc]
    app.get("/m")(route)
    context: Any = FakeContext(function_name="unit", aws_request_id="r-1")
    result: dict[str, Any] = app.resolve(get_event("/m"), context)
    return result


@pytest.mark.parametrize(("model", "expected"), [(m, e) for _, m, e in CASES], ids=[name for name, _, _ in CASES])
def test_each_response_model_is_pinned_on_the_wire(model: OutModel, expected: str) -> None:
    served = _served(model)
    assert (served["statusCode"], served["headers"]["Content-Type"]) == (200, "application/json")
    assert served["body"] == expected
    assert model.wire() == json.loads(expected)
    assert type(model).model_validate(json.loads(expected)) == model  # what a client parses back


ERRORS: list[tuple[str, ErrorOut, str]] = [
    (
        "plain",
        error_envelope("ROUTE_NOT_FOUND", "no such route"),
        '{"error":{"code":"ROUTE_NOT_FOUND","message":"no such route"}}',
    ),
    (
        "stale base",
        error_of(errors.StaleBaseVersion("base version 1 is not the current version", current_version=2)),
        '{"error":{"code":"STALE_BASE_VERSION","message":"base version 1 is not the current version"},'
        '"currentVersion":2}',
    ),
    (
        "stale policy (the current policy as the policy routes answer it)",
        error_of(errors.StalePolicyRevision("policy revision is stale", current=Policy(Mode.AUTO, 3, 1))),
        '{"error":{"code":"STALE_POLICY_REVISION","message":"policy revision is stale"},'
        '"current":{"mode":"auto","policyRevision":3,"clearGeneration":1}}',
    ),
    (
        "notes too large (size stays inside)",
        error_of(NotesTooLarge("notes are 40000 bytes; the cap is 32768", size=40000, limit=32768)),
        '{"error":{"code":"NOTES_TOO_LARGE","message":"notes are 40000 bytes; the cap is 32768"},"limit":32768}',
    ),
    (
        "edits rejected",
        error_of(
            InvalidEdits("edits rejected", problems=[EditProblem(0, "ambiguous"), EditProblem(-1, "too_many_edits")])
        ),
        '{"error":{"code":"INVALID_EDITS","message":"edits rejected"},'
        '"problems":[{"index":0,"reason":"ambiguous"},{"index":-1,"reason":"too_many_edits"}]}',
    ),
    (
        "notes conflict",
        error_of(NotesConflict(0, 2)),
        '{"error":{"code":"NOTES_REVISION_CONFLICT","message":"expected notes revision 0, current is 2"},'
        '"currentRevision":2}',
    ),
    (
        "predicate",
        error_envelope("X", "m", {"predicate": Predicate.POLICY, "secret": "never sent"}),
        '{"error":{"code":"X","message":"m"},"predicate":"policy"}',
    ),
]


@pytest.mark.parametrize(("envelope", "expected"), [(m, e) for _, m, e in ERRORS], ids=[name for name, _, _ in ERRORS])
def test_the_error_envelope_is_pinned_on_the_wire(envelope: ErrorOut, expected: str) -> None:
    assert error_response(409, envelope).body == expected
    assert ErrorOut.model_validate(json.loads(expected)) == envelope


def test_the_loopback_guard_answers_the_same_envelope() -> None:
    """The guard stays standard-library only (the moto server imports it), so it spells its one refusal
    itself; this keeps that spelling the builder's."""
    assert json.loads(loopback.refusal_body()) == error_envelope(loopback.CODE, loopback.MESSAGE).wire()


def test_a_route_answering_other_than_its_declared_model_is_a_500_not_a_400() -> None:
    app = build_resolver()

    @app.get("/m")
    def wrong() -> Response[WorkspaceCreated]:
        return respond(200, cast(WorkspaceCreated, HealthOut()))

    context: Any = FakeContext(function_name="unit", aws_request_id="r-1")
    result = app.resolve(get_event("/m"), context)
    assert (result["statusCode"], json.loads(result["body"])) == (
        500,
        {"error": {"code": "INTERNAL", "message": "internal error"}},
    )
