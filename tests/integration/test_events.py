"""Every event in events/ runs through the handler template.yaml routes it to, against the moto server.

The events are the canonical request shapes (`sam local invoke -e events/<file>`). They use fixed ids, so
this test runs them, in one deliberate order, against a fresh table seeded with the fixtures they name:
workspace `ws_events0000000000000000` (owner `user-owner`, shared), key sessions `ks_events0000000000000000`
(revoked by key-session-revoke) and `ks_events0000000000000001` (the automation admission's), and for
recall, capture and the notes an admission of conversation `conv-events` (owned by `user-owner` in that
workspace) for session `sess-events`, with delivery credential `cred-events`.

The order makes every event succeed: save base 0 -> v1, apply proposal base 1 -> v2, clear base 2 -> v3
(clear generation 1), undo to v1 base 3 -> v4, purge of the proposal's line (v2 only), retention 30 days,
recall sees revision 4, capture base 4 -> v5.

Stream events (a `Records` list: change-feed-stream.json, scripts/change_feed_event.py's output) go to the
function the template feeds from the table's stream, which must publish every record to the feed's bus.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from scripts.localstack.gateway import FakeContext, LambdaHandler, _load_module
from scripts.localstack.resources import LocalResources, create_table
from scripts.localstack.template import Route, load_template, routes
from tests.integration.turn_support import running_worker, turn_result, worker_settings
from workspace_memory import bootstrap, keys
from workspace_memory.admission import RETENTION_SECONDS, AdmissionRef, credential_context, credential_hash
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.clock import iso
from workspace_memory.entries import Draft, EntryText
from workspace_memory.keysessions import TTL_GRACE_SECONDS
from workspace_memory.notes import Notebook
from workspace_memory.settings import Settings
from workspace_memory.terms import EntryScope, EntryType
from workspace_memory.turn_contract import turn_id_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"

WS = "ws_events0000000000000000"
OWNER = "user-owner"
CONV = "conv-events"
KEY_SESSION = "ks_events0000000000000000"  # revoked by key-session-revoke.json
LIVE_KEY_SESSION = "ks_events0000000000000001"  # automation-admission.json admits under it
SESSION = "sess-events"
ALL_SCOPES = ["memory:read", "memory:write", "notes"]
CREDENTIAL = "cred-events"
ADMISSION_ID = AdmissionRef(CONV, WS, OWNER, None).encode("adm_events0000000000000000")
FAR_FUTURE_SECONDS = 365 * 86400

# The authority the seeded admission was "admitted under" is the state the events before recall/capture
# leave behind: ai-set bumps consent 0 -> 1, memory-policy-put sets auto at revision 1, memory-clear bumps
# the clear generation 0 -> 1.
ADMITTED_CONSENT_REVISION = 1
ADMITTED_POLICY_REVISION = 1
ADMITTED_CLEAR_GENERATION = 1

TURN_ID = turn_id_for(CONV, "events-turn-1")  # the id turn-get.json names: derived from turn-start's key

COMMIT = frozenset({"version", "op", "bytes", "ciphertextSha256", "createdAt"})
POLICY = frozenset({"mode", "policyRevision", "clearGeneration"})
NOTES_META = frozenset({"revision", "bytes", "updatedAt"})
DELETION = frozenset(
    {"workspaceId", "status", "phase", "itemsDeleted", "branchKeyDestroyed", "requestedAt", "completedAt"}
)
ENTRY_ID = "en_events0000000000000000"
CANDIDATES = ("ec_events0000000000000000", "ec_events0000000000000001")
EDITOR = "user-editor"
ENTRY = frozenset(
    {
        "entryId",
        "revision",
        "scope",
        "key",
        "type",
        "status",
        "title",
        "summary",
        "body",
        "validFrom",
        "validTo",
        "author",
        "authorKind",
        "citations",
    }
)


@dataclass(frozen=True)
class Expect:
    status: int
    keys: frozenset[str]
    """The exact top-level keys of the JSON body; empty means no body at all (204)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    html: bool = False
    """The body is an HTML page (Swagger UI, the memory frame), not JSON."""
    text: str = ""
    """The body is this kind of static text (the frame's files): it starts with this, not JSON."""


# Event file -> expected answer, in the order the events run (dicts keep insertion order).
SEQUENCE: dict[str, Expect] = {
    "health.json": Expect(200, frozenset({"status"}), {"status": "ok"}),
    "workspace-create.json": Expect(201, frozenset({"workspaceId"})),
    "member-put.json": Expect(200, frozenset({"userId", "role"}), {"userId": "user-editor", "role": "editor"}),
    "ai-set.json": Expect(200, frozenset({"enabled", "consentRevision"}), {"enabled": True, "consentRevision": 1}),
    "key-session-open.json": Expect(201, frozenset({"keySessionId", "expiresAt", "scopes"}), {"scopes": ALL_SCOPES}),
    "key-session-revoke.json": Expect(204, frozenset()),
    "workspace-get.json": Expect(
        200,
        frozenset(
            {
                "workspaceId",
                "name",
                "shareType",
                "ownerId",
                "role",
                "canWrite",
                "aiEnabled",
                "consentRevision",
                "historyDays",
                "createdAt",
            }
        ),
        {"workspaceId": WS, "role": "owner", "canWrite": True, "aiEnabled": True, "consentRevision": 1},
    ),
    "workspaces-list.json": Expect(200, frozenset({"workspaces", "nextCursor"}), {"nextCursor": None}),
    "key-sessions-list.json": Expect(200, frozenset({"keySessions", "nextCursor"}), {"nextCursor": None}),
    "memory-policy-get.json": Expect(200, POLICY, {"mode": "read_only", "policyRevision": 0, "clearGeneration": 0}),
    "memory-policy-put.json": Expect(200, POLICY, {"mode": "auto", "policyRevision": 1, "clearGeneration": 0}),
    "memory-save.json": Expect(200, COMMIT, {"version": 1, "op": "save"}),
    "memory-get.json": Expect(
        200,
        frozenset({"version", "content", "bytes", "recallEligible", "updatedAt", "updatedBy"}),
        {"version": 1, "content": "# Team memory\n- We deploy on Fridays\n", "recallEligible": True},
    ),
    "memory-proposals-apply.json": Expect(200, COMMIT, {"version": 2, "op": "save"}),
    "memory-clear.json": Expect(200, COMMIT | {"clearGeneration"}, {"version": 3, "op": "clear", "clearGeneration": 1}),
    "memory-undo.json": Expect(200, COMMIT | {"restoredFrom"}, {"version": 4, "op": "undo", "restoredFrom": 1}),
    "memory-versions.json": Expect(200, frozenset({"versions", "nextCursor"}), {"nextCursor": None}),
    "memory-version-get.json": Expect(
        200,
        frozenset({"version", "op", "author", "createdAt", "bytes", "ciphertextSha256", "content"}),
        {"version": 1, "op": "save", "author": OWNER},
    ),
    # v2 alone holds the proposal's line (the head, v4, restored v1): it becomes a stub.
    "memory-purge.json": Expect(200, frozenset({"purgedVersions", "count"}), {"purgedVersions": [2], "count": 1}),
    "retention-put.json": Expect(200, frozenset({"historyDays"}), {"historyDays": 30}),
    "retention-get.json": Expect(200, frozenset({"historyDays"}), {"historyDays": 30}),
    "automation-recall.json": Expect(
        200,
        frozenset({"status", "revision", "block", "memoryWrite"}),
        {"status": "ok", "revision": 4, "memoryWrite": "commit"},
    ),
    "automation-capture.json": Expect(
        200, frozenset({"outcome", "version", "receipt"}), {"outcome": "committed", "version": 5}
    ),
    "automation-entry-save.json": Expect(
        200, frozenset({"outcome", "entryId", "revision"}), {"outcome": "committed", "revision": 1}
    ),
    "automation-entry-get.json": Expect(200, ENTRY, {"entryId": ENTRY_ID, "revision": 1, "status": "active"}),
    "automation-entry-forget.json": Expect(
        200, frozenset({"outcome", "entryId", "candidateId"}), {"outcome": "proposal", "entryId": ENTRY_ID}
    ),
    "automation-search.json": Expect(200, frozenset({"results"})),
    "memory-receipts.json": Expect(200, frozenset({"receipts", "nextCursor"}), {"nextCursor": None}),
    "automation-notes-get.json": Expect(200, NOTES_META | {"notes"}, {"revision": 0, "notes": ""}),
    "automation-notes-put.json": Expect(200, NOTES_META, {"revision": 1, "bytes": len("check the deploy")}),
    "automation-notes-delete.json": Expect(200, NOTES_META, {"revision": 2, "bytes": 0}),
    # The runtime's admission takes the conversation's credential slot from <admission>, so it comes after
    # every event that uses <admission>.
    "automation-admission.json": Expect(
        201, frozenset({"admissionId", "credential", "expiresAt", "mode"}), {"mode": "auto"}
    ),
    # The turn takes over the conversation's credential slot, so it comes after recall and capture.
    "turn-start.json": Expect(202, frozenset({"turnId", "admissionId"}), {"turnId": TURN_ID}),
    "turn-get.json": Expect(
        200,
        frozenset({"turnId", "status", "answer", "rounds", "toolOutcomes", "receipts"}),
        {"turnId": TURN_ID, "status": "completed", "rounds": 1, "toolOutcomes": []},
    ),
    "docs-openapi.json": Expect(
        200, frozenset({"openapi", "info", "servers", "paths", "components"}), {"openapi": "3.1.0"}
    ),
    "docs-ui.json": Expect(200, frozenset(), html=True),
    "frame-page.json": Expect(200, frozenset(), html=True),
    "frame-file.json": Expect(200, frozenset(), text="// "),
    # Entries, on the fixtures `_seed_entries` lays out (events/README.md, step 7).
    "entry-create.json": Expect(201, frozenset({"entryId", "revision"}), {"revision": 1}),
    "entry-list.json": Expect(200, frozenset({"entries", "nextCursor"}), {"nextCursor": None}),
    "entry-get.json": Expect(
        200, ENTRY, {"entryId": ENTRY_ID, "revision": 1, "status": "active", "key": "ops/deploy-day"}
    ),
    "entry-put.json": Expect(200, frozenset({"entryId", "revision"}), {"entryId": ENTRY_ID, "revision": 2}),
    "entry-history.json": Expect(200, frozenset({"entries", "nextCursor"}), {"nextCursor": None}),
    "entry-search.json": Expect(200, frozenset({"results"})),
    "candidates-list.json": Expect(200, frozenset({"candidates", "nextCursor"}), {"nextCursor": None}),
    "candidate-accept.json": Expect(200, frozenset({"entryId", "revision"}), {"revision": 1}),
    "candidate-reject.json": Expect(204, frozenset()),
    "entry-delete.json": Expect(204, frozenset()),
    "member-entries-delete.json": Expect(200, frozenset({"forgotten"}), {"forgotten": 1}),
    # Last: deleting the workspace (the sequence's results are checked just before it), then the purge's routes,
    # which answer the same whether the worker has purged already or not (both steps are idempotent).
    "workspace-delete.json": Expect(202, DELETION, {"workspaceId": WS}),
    "workspace-deletion-get.json": Expect(200, DELETION, {"workspaceId": WS}),
    "automation-deletion-branch-key.json": Expect(200, frozenset({"itemsDeleted"}), {"itemsDeleted": 0}),
    "automation-deletion-batch.json": Expect(200, frozenset({"deleted", "more"})),
}


def _event_files() -> set[str]:
    return {p.name for p in EVENTS.glob("*.json")}


STREAM_EVENTS = {"change-feed-stream.json"}
"""Stream events, run through the stream-fed function rather than a route."""


def _stream_handler() -> LambdaHandler:
    """The handler of the one function the template feeds from a DynamoDB stream."""
    template = load_template()
    (props,) = [
        r["Properties"]
        for r in template["Resources"].values()
        if r.get("Type") == "AWS::Serverless::Function"
        and any(e.get("Type") == "DynamoDB" for e in (r["Properties"].get("Events") or {}).values())
    ]
    module_name, _, attr = props["Handler"].rpartition(".")
    module = _load_module("events_stream", ROOT / props["CodeUri"] / f"{module_name}.py")
    handler: LambdaHandler = getattr(module, attr)
    return handler


def _handlers() -> dict[str, tuple[Route, LambdaHandler]]:
    """Route key -> (route, handler), each function's module loaded once from its CodeUri/Handler."""
    loaded: dict[str, LambdaHandler] = {}
    out: dict[str, tuple[Route, LambdaHandler]] = {}
    for route in routes(load_template()):
        if route.function not in loaded:
            module_name, _, attr = route.handler.rpartition(".")
            module = _load_module(f"events_{route.function}", route.code_dir / f"{module_name}.py")
            loaded[route.function] = getattr(module, attr)
        out[route.route_key] = (route, loaded[route.function])
    return out


def _seed(svc: Services) -> None:
    """The fixtures the events name, laid out as the services write them (keys.py)."""
    now = svc.clock.now()
    at = iso(now)
    far = int(now) + FAR_FUTURE_SECONDS
    branch_key_id = svc.key_store.create_branch_key(WS)  # as create_workspace does, before the META
    svc.table.put(
        {
            **keys.as_key(keys.meta(WS)),
            "workspaceId": WS,
            "branchKeyId": branch_key_id,
            "name": "Events workspace",
            "ownerId": OWNER,
            "shareType": "shared",
            "aiEnabled": False,
            "consentRevision": 0,
            "createdAt": at,
        }
    )
    owner = {**keys.as_key(keys.member(WS, OWNER)), "userId": OWNER, "role": "owner", "canWrite": True}
    svc.table.put({**owner, "updatedAt": at})
    for key_session in (KEY_SESSION, LIVE_KEY_SESSION):
        svc.table.put(
            {
                **keys.as_key(keys.key_session(WS, key_session)),
                "keySessionId": key_session,
                "openedBy": OWNER,
                "scopes": ALL_SCOPES,
                "expiresAt": far,
                "ttl": far + TTL_GRACE_SECONDS,
            }
        )
    nonce_hash = credential_hash(CREDENTIAL)
    svc.table.put(
        {
            **keys.as_key(keys.admission(ADMISSION_ID)),
            "admissionId": ADMISSION_ID,
            "conversationId": CONV,
            "workspaceId": WS,
            "userId": OWNER,
            "mode": "auto",
            "policyRevision": ADMITTED_POLICY_REVISION,
            "clearGeneration": ADMITTED_CLEAR_GENERATION,
            "consentRevision": ADMITTED_CONSENT_REVISION,
            "scopes": ALL_SCOPES,
            "sessionId": SESSION,
            "nonceHash": nonce_hash,
            "credentialCiphertext": svc.cipher.encrypt(CREDENTIAL.encode(), credential_context(WS, ADMISSION_ID)),
            "expiresAt": far,
            "status": "admitted",
            "createdAt": at,
            "ttl": far + RETENTION_SECONDS,
        }
    )
    svc.table.put(
        {
            **keys.as_key(keys.credential(CONV)),
            "admissionId": ADMISSION_ID,
            "nonceHash": nonce_hash,
            "workspaceId": WS,
            "expiresAt": far,
            "ttl": far + RETENTION_SECONDS,
        }
    )
    svc.table.put({**keys.as_key(keys.conversation_owner(CONV)), "workspaceId": WS, "userId": OWNER, "createdAt": at})
    _seed_entries(svc, at)


def _seed_entries(svc: Services, at: str) -> None:
    """The entry fixtures, written through the entry service with the events' fixed ids."""
    editor = {**keys.as_key(keys.member(WS, EDITOR)), "userId": EDITOR, "role": "editor", "canWrite": True}
    svc.table.put({**editor, "updatedAt": at})
    text = EntryText("Deploy day", "We deploy on Fridays", "We deploy on Fridays.", key="ops/deploy-day")
    ids = iter([ENTRY_ID, *CANDIDATES])
    with mock.patch("workspace_memory.entries.new_id", side_effect=lambda _prefix: next(ids)):
        svc.entries.create(OWNER, WS, Draft(EntryType.FACT, text))
        for title in ("Use feature flags", "Prefer tabs"):
            svc.entries.propose(OWNER, WS, Draft(EntryType.PREFERENCE, EntryText(title, title, "")))
    svc.entries.create(EDITOR, WS, Draft(EntryType.FACT, EntryText("Mine", "mine", ""), EntryScope.MEMBER))


@pytest.fixture
def events_svc(
    stack_env: dict[str, str], svc: Services, resources: LocalResources, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    """Services on a fresh table, which the handlers also use for the duration of the test."""
    table_name = f"wm-events-{uuid.uuid4().hex[:8]}"
    create_table(resources.endpoint_url, table_name)
    monkeypatch.setenv("TABLE_NAME", table_name)
    bootstrap.services.cache_clear()
    bootstrap.turn_service.cache_clear()
    bootstrap.deletion_service.cache_clear()
    yield build_services(svc.settings.model_copy(update={"table_name": table_name}), clients=svc.clients)
    bootstrap.services.cache_clear()
    bootstrap.turn_service.cache_clear()
    bootstrap.deletion_service.cache_clear()


def test_every_event_file_is_run() -> None:
    assert set(SEQUENCE) | STREAM_EVENTS == _event_files()
    assert not set(SEQUENCE) & STREAM_EVENTS


@pytest.mark.parametrize("name", sorted(STREAM_EVENTS))
def test_stream_events_run_through_the_change_feed(stack_env: dict[str, str], name: str) -> None:
    """Every record is published (no batch item failure) to the stack's change-feed bus."""
    assert stack_env.get("CHANGE_FEED_BUS_NAME")
    event: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    bootstrap.change_feed.cache_clear()
    context = FakeContext(function_name="ChangeFeedFunction", aws_request_id=name, deadline=time.monotonic() + 30)
    try:
        assert _stream_handler()(copy.deepcopy(event), context) == {"batchItemFailures": []}
    finally:
        bootstrap.change_feed.cache_clear()


def test_every_event_runs_through_its_handler(events_svc: Services, settings: Settings, gateway_url: str) -> None:
    assert bootstrap.services().settings.table_name == events_svc.settings.table_name
    _seed(events_svc)
    handlers = _handlers()
    with running_worker(worker_settings(settings, gateway_url)):
        _run_sequence(events_svc, handlers)


def _run_sequence(events_svc: Services, handlers: dict[str, Any]) -> None:
    for name, expect in SEQUENCE.items():
        if name == "workspace-delete.json":
            _check_what_the_sequence_left(events_svc)
        if name == "turn-get.json":
            turn_result(events_svc.settings, events_svc.cipher, TURN_ID)  # wait for the turn to finish
        event: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
        route, handler = handlers[event["routeKey"]]
        context = FakeContext(
            function_name=route.function,
            aws_request_id=event["requestContext"]["requestId"],
            deadline=time.monotonic() + 30,
        )
        result = handler(copy.deepcopy(event), context)
        raw = result.get("body") or ""
        assert (name, result["statusCode"]) == (name, expect.status), raw
        if expect.html:
            assert raw.startswith("<!DOCTYPE html>"), name
            continue
        if expect.text:
            assert raw.startswith(expect.text), name
            continue
        if not expect.keys:
            assert raw == "", name
            continue
        body = json.loads(raw)
        assert isinstance(body, dict), name
        assert (name, set(body)) == (name, set(expect.keys))
        assert (name, {k: body[k] for k in expect.values}) == (name, dict(expect.values))
    # The deletion took the workspace's branch key at once, whatever the purge had done yet.
    assert events_svc.key_store.destroy_branch_key(WS) == 0


def _check_what_the_sequence_left(events_svc: Services) -> None:
    # What the sequence left behind: the capture was fenced on the seeded admission, recall left a receipt.
    doc = events_svc.document.read(OWNER, WS)
    assert (doc.version, doc.content) == (5, "# Team memory\n- We deploy on Fridays\n- Use feature flags\n")
    page = events_svc.recall.receipts(OWNER, CONV, 100, None)
    receipts = page.receipts
    assert page.next_cursor is None
    assert [(r.status, r.revision, r.turn_id) for r in receipts] == [("ok", 4, None), ("ok", 5, TURN_ID)]
    assert receipts[0].admission_id == ADMISSION_ID  # the seeded admission's recall, then the turn's
    # The notes events wrote the owner's notebook of the seeded admission's session, which the turn then read.
    notes = events_svc.notes.get(Notebook(WS, OWNER, SESSION))
    assert (notes.revision, notes.text) == (2, "")
