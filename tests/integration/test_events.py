"""Every event in events/ runs through the function template.yaml routes it to, as the local stack runs it
(from the built artifact, in execution environment processes of its own), against the session's moto server
and Temporal.

The events are the canonical request shapes (`make invoke`, `sam local invoke -e events/<file>`). They use fixed ids, so
this test runs them, in one deliberate order, against a fresh table seeded with the fixtures they name:
workspace `ws_events0000000000000000` (owner `user-owner`, shared), key sessions `ks_events0000000000000000`
(revoked by key-session-revoke) and `ks_events0000000000000001` (the automation admission's), and for
recall, capture and the notes an admission of conversation `conv-events` (owned by `user-owner` in that
workspace) for session `sess-events`, with delivery credential `cred-events`.

The order makes every event succeed: save base 0 -> v1, apply proposal base 1 -> v2, clear base 2 -> v3
(clear generation 1), undo to v1 base 3 -> v4, purge of the proposal's line (v2 only), retention 30 days,
recall sees revision 4, capture base 4 -> v5.

The functions read the table from their environment, as Lambda's do: a gateway of the events' own gives them
the stack's environment with the events' table, and serves the turn worker's calls of the turn the events
start. Stream events (a `Records` list: change-feed-stream.json, scripts/change_feed_event.py's output) go to
the function the template feeds from the table's stream, in a fresh environment (`make invoke`'s runner),
which must publish every record to the feed's bus.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from scripts.localstack.gateway import Gateway, serving
from scripts.localstack.invoke import invoke
from scripts.localstack.resources import LocalResources, create_table
from scripts.localstack.stack import LocalStack
from scripts.localstack.template import load_template
from tests.integration.events_support import (
    ADMISSION_ID,
    CONV,
    ENTRY_ID,
    ERASURE_ID,
    EVENTS,
    EXPORT_ID,
    OWNER,
    PAGE_ID,
    SESSION,
    TURN_ID,
    WS,
    documented_statuses,
    seed,
)
from tests.integration.turn_support import running_worker, turn_result, worker_settings
from tests.support import FunctionLogs
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.notes import Notebook

pytestmark = pytest.mark.integration

COMMIT = frozenset({"version", "op", "bytes", "ciphertextSha256", "createdAt"})
POLICY = frozenset({"mode", "policyRevision", "clearGeneration"})
NOTES_META = frozenset({"revision", "bytes", "updatedAt"})
DELETION = frozenset(
    {"workspaceId", "status", "phase", "itemsDeleted", "branchKeyDestroyed", "requestedAt", "completedAt"}
)
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
        "reads",
        "pinned",
    }
)
MARKS = frozenset({"entryId", "revision", "pinned"})
"""What a pin, an unpin or a verification answers (and `verifiedAt`, `verifiedBy` once verified)."""
WRITTEN = frozenset({"entryId", "revision", "possibleConflicts"})
"""A person's create or revision: written, with what it may contradict (decisions/0087)."""
PAGE = frozenset(
    {
        "pageId",
        "revision",
        "scope",
        "category",
        "title",
        "summarizedFrom",
        "summaryStale",
        "entries",
        "createdAt",
        "updatedAt",
    }
)
"""A page as read (no notes nor summary yet: both are left out until set)."""
RETENTION = frozenset({"historyDays", "agentDays"})
EXPORT = frozenset(
    {"exportId", "workspaceId", "scope", "status", "phase", "filesDone", "filesTotal", "createdAt", "expiresAt"}
)
CONSOLIDATION = frozenset({"enabled", "autoFile", "revision", "cron", "scheduled", "nextRunAt"})
UNTRUSTED = frozenset({"trust", "evidence"})
"""What the automation routes add to the memory they hand an agent."""


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


ERASURE = frozenset(
    {"erasureId", "pseudonym", "status", "requestedBy", "requestedAt", "completedAt", "deleted", "pseudonymized"}
)

# Event file -> expected answer, in the order the events run (dicts keep insertion order).
RUN_ID = "cr_eeee00000000000000000000"
CONSOLIDATION_COUNTS = frozenset({"pairs", "judged", "proposed", "alreadyProposed", "stale", "left"})
CONSOLIDATION_RUN = frozenset({"runId", "trigger", "status", "startedAt", "finishedAt", "counts"})

SEQUENCE: dict[str, Expect] = {
    "health.json": Expect(200, frozenset({"status"}), {"status": "ok"}),
    "workspace-create.json": Expect(201, frozenset({"workspaceId"})),
    "member-put.json": Expect(200, frozenset({"userId", "role"}), {"userId": "user-editor", "role": "editor"}),
    "ai-set.json": Expect(200, frozenset({"enabled", "consentRevision"}), {"enabled": True, "consentRevision": 1}),
    "key-session-open.json": Expect(
        201,
        frozenset({"keySessionId", "expiresAt", "scopes", "bind"}),
        {"scopes": ["memory:read"], "bind": {"scopes": ["workspace"], "keyPrefixes": ["ops/"]}},
    ),
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
    "retention-put.json": Expect(200, RETENTION, {"historyDays": 30, "agentDays": 90}),
    "retention-get.json": Expect(200, RETENTION, {"historyDays": 30, "agentDays": 90}),
    "automation-recall.json": Expect(
        200,
        UNTRUSTED | {"status", "revision", "block", "memoryWrite"},
        {"status": "ok", "revision": 4, "memoryWrite": "commit", "trust": "untrusted", "evidence": False},
    ),
    "automation-capture.json": Expect(
        200, frozenset({"outcome", "version", "receipt"}), {"outcome": "committed", "version": 5}
    ),
    "automation-entry-save.json": Expect(  # nothing it may contradict: written (decisions/0087)
        200,
        frozenset({"outcome", "entryId", "revision", "possibleConflicts"}),
        {"outcome": "committed", "revision": 1, "possibleConflicts": []},
    ),
    "automation-entry-list.json": Expect(  # the entry `automation-entry-save` committed, nothing hidden
        200, frozenset({"entries", "nextCursor", "hidden"}) | UNTRUSTED, {"nextCursor": None, "hidden": 0}
    ),
    "automation-entry-get.json": Expect(
        200, ENTRY | UNTRUSTED, {"entryId": ENTRY_ID, "revision": 1, "status": "active", "trust": "untrusted"}
    ),
    "automation-entry-verify.json": Expect(  # on document version 1, which still reads as its hash says
        200, frozenset({"outcome", "entryId", "revision"}), {"outcome": "committed", "entryId": ENTRY_ID, "revision": 1}
    ),
    "automation-entry-forget.json": Expect(
        200, frozenset({"outcome", "entryId", "candidateId"}), {"outcome": "proposal", "entryId": ENTRY_ID}
    ),
    "automation-search.json": Expect(200, UNTRUSTED | {"results", "hidden"}, {"hidden": 0}),
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
        frozenset({"turnId", "status", "answer", "rounds", "toolOutcomes", "receipts", "proposals"}),
        {"turnId": TURN_ID, "status": "completed", "rounds": 1, "toolOutcomes": []},
    ),
    "docs-openapi.json": Expect(
        200, frozenset({"openapi", "info", "servers", "paths", "components"}), {"openapi": "3.1.0"}
    ),
    "docs-ui.json": Expect(200, frozenset(), html=True),
    "frame-page.json": Expect(200, frozenset(), html=True),
    "frame-file.json": Expect(200, frozenset(), text="// "),
    # Entries, on the fixtures `_seed_entries` lays out (events/README.md, step 7).
    "entry-create.json": Expect(
        201, frozenset({"entryId", "revision", "possibleConflicts"}), {"revision": 1, "possibleConflicts": []}
    ),
    "entry-list.json": Expect(
        200, frozenset({"entries", "nextCursor", "hidden", "budgets"}), {"nextCursor": None, "hidden": 0}
    ),
    "entry-get.json": Expect(  # read by `automation-entry-get` (`lastReadAt`), verified by its agent (one source)
        200,
        ENTRY | {"lastReadAt", "verifiedAt", "verifiedBy", "verifiedEvidence"},
        {"entryId": ENTRY_ID, "revision": 1, "status": "active", "key": "ops/deploy-day", "verifiedEvidence": 1},
    ),
    "entry-put.json": Expect(
        200, WRITTEN, {"entryId": ENTRY_ID, "revision": 2, "possibleConflicts": []}
    ),  # a revision of its own chain: not its own conflict
    "entry-revert.json": Expect(200, WRITTEN, {"entryId": ENTRY_ID, "revision": 3, "possibleConflicts": []}),
    "entry-pin.json": Expect(200, MARKS, {"entryId": ENTRY_ID, "revision": 3, "pinned": True}),
    "entry-verify.json": Expect(
        200, MARKS | {"verifiedAt", "verifiedBy"}, {"revision": 3, "pinned": True, "verifiedBy": "user-owner"}
    ),
    "entry-unpin.json": Expect(  # unpinned again: the candidates after it may write over the entry
        200, MARKS | {"verifiedAt", "verifiedBy"}, {"revision": 3, "pinned": False, "verifiedBy": "user-owner"}
    ),
    "entry-history.json": Expect(200, frozenset({"entries", "nextCursor"}), {"nextCursor": None}),
    "entry-search.json": Expect(200, frozenset({"results", "hidden"}), {"hidden": 0}),
    # Pages, on the seeded `topic` page (events/README.md, step 8).
    "page-categories-put.json": Expect(200, frozenset({"categories", "revision"}), {"categories": ["release"]}),
    "page-create.json": Expect(201, frozenset({"pageId", "revision"}), {"revision": 1}),
    "page-list.json": Expect(200, frozenset({"pages", "categories"})),
    "page-entry-file.json": Expect(200, frozenset({"pageId", "revision"}), {"pageId": PAGE_ID, "revision": 2}),
    "page-get.json": Expect(200, PAGE, {"pageId": PAGE_ID, "revision": 2, "summaryStale": True}),
    "page-update.json": Expect(200, frozenset({"pageId", "revision"}), {"revision": 3}),
    "page-entry-unfile.json": Expect(200, frozenset({"pageId", "revision"}), {"revision": 4}),
    "page-delete.json": Expect(204, frozenset()),
    "candidates-list.json": Expect(200, frozenset({"candidates", "nextCursor"}), {"nextCursor": None}),
    "candidate-accept.json": Expect(200, frozenset({"entryId", "revision"}), {"revision": 1}),
    "candidate-reject.json": Expect(204, frozenset()),
    "entry-delete.json": Expect(204, frozenset()),
    "member-entries-delete.json": Expect(200, frozenset({"forgotten"}), {"forgotten": 1}),
    "audit-read.json": Expect(200, frozenset({"events", "nextCursor"})),
    "agent-memories-delete.json": Expect(  # the agent's saved entry of `automation-entry-save`, nothing left
        200,
        frozenset({"forgotten", "entryIds", "kept", "dismissed", "candidateIds", "nextCursor"}),
        {"nextCursor": None},
    ),
    # Exports, on the seeded export (events/README.md, step 9): its file, its end past the limit, its progress.
    "export-request.json": Expect(202, EXPORT, {"scope": "me", "status": "running"}),
    "automation-export-file.json": Expect(
        200, frozenset({"file", "count", "chunks", "tooLarge"}), {"file": "documents.json", "tooLarge": False}
    ),
    "automation-export-finish.json": Expect(200, frozenset({"status", "files"}), {"status": "too_large", "files": 5}),
    "export-get.json": Expect(200, EXPORT, {"exportId": EXPORT_ID, "status": "too_large", "phase": "done"}),
    "export-archive.json": Expect(413, frozenset({"error"})),
    # Imports (step 9): an archive that is not one (400), an import that does not exist (404), and the workflow's
    # steps for it (409: not running). The round trip itself is tests/integration/export/test_import.py.
    "import-request.json": Expect(400, frozenset({"error"})),
    "import-get.json": Expect(404, frozenset({"error"})),
    "automation-import-file.json": Expect(409, frozenset({"error"})),
    "automation-import-finish.json": Expect(409, frozenset({"error"})),
    # Erasing the editor (after the exports: an erasure deletes every archive built before it; its workflow
    # runs on in the background), then the receipt of an erasure the
    # fixtures laid out, completed, and a step of it, which finds nothing left to do.
    # The owner's reindex: one step seals every retained revision of the events' workspace (far under a step).
    "search-reindex.json": Expect(200, frozenset({"indexed", "total", "decrypted", "complete"}), {"complete": True}),
    "mentions-find.json": Expect(200, frozenset({"versions", "entries", "scanned", "complete"}), {"complete": True}),
    # A consolidation run's steps, as the workflow makes them (the events' few entries pair with nothing), then the
    # owner's view of the run they recorded.
    "automation-consolidation-pairs.json": Expect(200, frozenset({"pairs", "counts"}), {"pairs": []}),
    "automation-consolidation-proposals.json": Expect(200, CONSOLIDATION_COUNTS, {"proposed": 0}),
    "automation-consolidation-finish.json": Expect(200, CONSOLIDATION_RUN, {"runId": RUN_ID, "status": "done"}),
    "consolidation-runs.json": Expect(200, frozenset({"runs"})),
    # The owner's consolidation: off by default, opted in (the schedule made), a run asked for now (started; its
    # workflow need not finish: the deletion below removes the schedule).
    "consolidation-get.json": Expect(200, CONSOLIDATION, {"enabled": False, "revision": 0, "scheduled": False}),
    "consolidation-put.json": Expect(200, CONSOLIDATION, {"enabled": True, "revision": 1, "scheduled": True}),
    "consolidation-run.json": Expect(202, frozenset({"runId", "trigger"}), {"trigger": "owner"}),
    "member-erasure.json": Expect(202, ERASURE, {"status": "running", "requestedBy": OWNER}),
    "erasure-get.json": Expect(200, ERASURE, {"erasureId": ERASURE_ID, "status": "completed"}),
    "automation-erasure-step.json": Expect(200, frozenset({"more", "after", "turns"}), {"more": False}),
    # Last: deleting the workspace (the sequence's results are checked just before it), then the purge's routes,
    # which answer the same whether the worker has purged already or not (both steps are idempotent).
    "workspace-delete.json": Expect(202, DELETION, {"workspaceId": WS}),
    "workspace-deletion-get.json": Expect(200, DELETION, {"workspaceId": WS}),
    "automation-deletion-branch-key.json": Expect(200, frozenset({"itemsDeleted"}), {"itemsDeleted": 0}),
    "automation-deletion-batch.json": Expect(200, frozenset({"deleted", "more", "turns"})),
}


def _event_files() -> set[str]:
    return {p.name for p in EVENTS.glob("*.json")}


STREAM_EVENTS = {"change-feed-stream.json"}
"""Stream events, run through the stream-fed function rather than a route."""


def _stream_function() -> str:
    """The one function the template feeds from a DynamoDB stream."""
    (function,) = [
        str(name)
        for name, r in load_template()["Resources"].items()
        if r.get("Type") == "AWS::Serverless::Function"
        and any(e.get("Type") == "DynamoDB" for e in (r["Properties"].get("Events") or {}).values())
    ]
    return function


@pytest.fixture
def events_svc(svc: Services, resources: LocalResources) -> Services:
    """Services on a fresh table of the events' own (they name fixed ids)."""
    table_name = f"wm-events-{uuid.uuid4().hex[:8]}"
    create_table(resources.endpoint_url, table_name)
    return build_services(svc.settings.model_copy(update={"table_name": table_name}), clients=svc.clients)


@pytest.fixture
def events_gateway(
    events_svc: Services, local_stack: LocalStack, function_logs: FunctionLogs
) -> Iterator[tuple[Gateway, str]]:
    """A gateway of the stack's functions on the events' table (the stack's environment, TABLE_NAME the
    events'), served for the turn worker's calls: the events and the worker reach the same execution
    environments, which read the table from their environment as Lambda's do."""
    environment = {**local_stack.environment(), "TABLE_NAME": events_svc.settings.table_name}
    with Gateway(environment, log=function_logs.path) as gateway, serving(gateway) as url:
        yield gateway, url


def test_every_event_file_is_run() -> None:
    assert set(SEQUENCE) | STREAM_EVENTS == _event_files()
    assert not set(SEQUENCE) & STREAM_EVENTS


@pytest.mark.parametrize("name", sorted(STREAM_EVENTS))
def test_stream_events_run_through_the_change_feed(stack_env: dict[str, str], name: str) -> None:
    """Every record is published (no batch item failure) to the stack's change-feed bus, by the function in a
    fresh execution environment, as `make invoke` runs it."""
    assert stack_env.get("CHANGE_FEED_BUS_NAME")
    event: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    invocation = invoke(_stream_function(), event, stack_env)
    assert (invocation.kind, invocation.payload) == ("result", {"batchItemFailures": []}), invocation


def test_every_event_runs_through_its_function(
    events_svc: Services, events_gateway: tuple[Gateway, str], settings: Settings
) -> None:
    """In the sequence's order, each event through the function template.yaml routes it to (execution
    environments from the built artifact), answered with its expected status, which the OpenAPI document
    lists for the route."""
    seed(events_svc)
    gateway, url = events_gateway
    functions = {route.route_key: route.function for route in gateway.routes}
    with running_worker(worker_settings(settings, url)):
        _run_sequence(events_svc, gateway, functions)


def _run_sequence(events_svc: Services, gateway: Gateway, functions: dict[str, str]) -> None:
    for name, expect in SEQUENCE.items():
        if name == "workspace-delete.json":
            _check_what_the_sequence_left(events_svc)
        if name == "turn-get.json":
            turn_result(events_svc.settings, events_svc.cipher, TURN_ID)  # wait for the turn to finish
        event: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
        invocation = gateway.environments.invoke(functions[event["routeKey"]], event)
        assert (name, invocation.kind) == (name, "result"), invocation
        result = invocation.payload
        raw = result.get("body") or ""
        assert (name, result["statusCode"]) == (name, expect.status), raw
        assert expect.status in documented_statuses(event["routeKey"]), name
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
