"""The demo's scenario, step by step: what Alice, her agent's turns and her agent runtime do, and what each
step must answer."""

from __future__ import annotations

import os
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any

from scripts.demo.transcript import ALICE, Http, block, check, outcomes, run_turn, say, show_document, step
from workflows.providers.scripted import SAVED_ENTRY
from workflows.tools import ToolName

HOST = "127.0.0.1"
RUNTIME = "demo"  # the automation caller's name: `Authorization: Bearer automation:demo`

FIRST_DOCUMENT = "# Team memory\n- We deploy on Tuesdays\n"
REMEMBERED = "- Feature flags gate risky changes"
NOTE = "ask Bob about the release train"
REFUSED_LINE = "- Staging mirrors production"
PROPOSED = "- Releases ship behind a flag"
RULE_QUOTE = "Keep answers short"


@dataclass(frozen=True)
class StackInfo:
    """Where the stack's Temporal UI is, and whether the demo started the stack (and will stop it)."""

    ui: str
    started: bool


def scenario(http: Http, stack: StackInfo) -> None:
    run = uuid.uuid4().hex[:8]
    conv, session, runtime_conv = f"conv-demo-{run}", f"sess-demo-{run}", f"conv-runtime-{run}"

    step(1, "Alice creates a shared workspace, turns workspace AI on and sets the memory policy to auto")
    ws = http.expect(
        "POST", "/v1/workspaces", 201, user=ALICE, body={"name": "platform team (demo)", "shareType": "shared"}
    )["workspaceId"]
    ws_path = f"/v1/workspaces/{ws}"
    http.expect("PUT", f"{ws_path}/ai", 200, user=ALICE, body={"enabled": True})
    policy = http.expect(
        "PUT", f"{ws_path}/memory/policy", 200, user=ALICE, body={"mode": "auto", "expectedRevision": 0}
    )
    check(policy["mode"] == "auto", "the policy mode auto", policy)

    step(2, "Alice saves the first version of the memory document (X-Base-Version: 0 = create-only)")
    saved = http.expect(
        "PUT",
        f"{ws_path}/memory",
        200,
        user=ALICE,
        body={"content": FIRST_DOCUMENT},
        headers={"X-Base-Version": "0"},
        fields=("version", "op", "bytes"),
    )
    check(saved["version"] == 1, "version 1", saved)

    step(3, f"A turn remembers a line: the scripted model calls {ToolName.REMEMBER}, the fence commits it")
    view = run_turn(http, conv, ws, f"remember: {REMEMBERED}\nWhat do you remember?")
    check(
        outcomes(view) == [(ToolName.REMEMBER, "committed")] and view["toolOutcomes"][0].get("version") == 2,
        f"one {ToolName.REMEMBER} outcome, committed as version 2",
        view["toolOutcomes"],
    )
    check(REMEMBERED in (view["answer"] or ""), "the final round's memory block to quote the new line", view["answer"])
    doc = show_document(http, ws)
    check(doc["version"] == 2 and REMEMBERED in doc["content"], f"version 2 containing {REMEMBERED!r}", doc)

    step(4, f"A turn writes a working note and answers from it (session {session}), then a later turn sees it")
    view = run_turn(http, conv, ws, f"note: {NOTE}\nWhat is in my notes?", session)
    check(
        outcomes(view) == [(ToolName.NOTES_UPDATE, "saved")],
        f"one {ToolName.NOTES_UPDATE}, saved",
        view["toolOutcomes"],
    )
    check(NOTE in (view["answer"] or ""), "round 2's notes block to carry the note", view["answer"])
    say("the next turn of the same session, with no directive:")
    view = run_turn(http, conv, ws, "What is in my notes?", session)
    check(NOTE in (view["answer"] or ""), "the note to carry over into the next turn of the session", view["answer"])
    say(f"→ the note written in the previous turn was folded into this turn's prompt: {NOTE!r}")

    step(5, "Alice opens a key session; her agent runtime admits under it and recalls v2; then Alice clears")
    # An agent runtime acts for Alice only under a key session she opened (its scopes bound what it may do).
    key_session = http.expect(
        "POST",
        f"{ws_path}/key-sessions",
        201,
        user=ALICE,
        body={"ttlSeconds": 900, "scopes": ["memory:read", "memory:write", "notes"]},
        fields=("keySessionId", "scopes"),
    )
    check(
        key_session["scopes"] == ["memory:read", "memory:write", "notes"],
        "a key session with the three scopes asked for (without scopes it would only read)",
        key_session,
    )
    admitted = http.expect(
        "POST",
        f"/v1/automation/conversations/{runtime_conv}/admissions",
        201,
        automation=RUNTIME,
        body={
            "workspaceId": ws,
            "userId": ALICE,
            "idempotencyKey": f"runtime-{run}",
            "keySessionId": key_session["keySessionId"],
        },
    )
    admission, credential = admitted["admissionId"], admitted["credential"]
    check(admitted["mode"] == "auto", "an admission frozen under auto", admitted)
    recalled = http.expect(
        "GET",
        f"/v1/automation/workspaces/{ws}/memory?purpose=recall",
        200,
        automation=RUNTIME,
        headers={"X-Admission-Id": admission, "X-Delivery-Credential": credential},
        fields=("status", "revision", "memoryWrite"),
    )
    check(
        recalled["status"] == "ok" and recalled["revision"] == 2 and recalled["memoryWrite"] == "commit",
        "recall status ok at revision 2, a write tool that could commit",
        recalled,
    )
    cleared = http.expect(
        "POST",
        f"{ws_path}/memory/clear",
        200,
        user=ALICE,
        headers={"X-Base-Version": "2"},
        fields=("version", "op", "bytes", "clearGeneration"),
    )
    check(cleared["version"] == 3 and cleared.get("clearGeneration") == 1, "version 3, clearGeneration 1", cleared)

    step(6, "The runtime captures with its pre-Clear admission: the fence refuses it")
    captured = http.expect(
        "PUT",
        f"/v1/automation/workspaces/{ws}/memory",
        200,
        automation=RUNTIME,
        headers={"Idempotency-Key": f"memory:{admission}"},
        body={
            "admissionId": admission,
            "credential": credential,
            "baseVersion": 2,
            "edits": [{"op": "add", "line": REFUSED_LINE}],
        },
    )
    check(
        captured.get("outcome") == "refused" and captured.get("predicate") == "policy",
        '{"outcome": "refused", "predicate": "policy"}',
        captured,
    )
    say(
        "why: the admission froze clearGeneration 0; the Clear moved it to 1, so the admission is retired: it is "
        "refused with the policy predicate before anything is read or decrypted, and nothing is written (the "
        "Clear landed first and wins; had it landed during the capture, the fence transaction would refuse it "
        "the same way)."
    )
    doc = show_document(http, ws)
    check(doc["version"] == 3 and doc["content"] == "", "the document untouched: the empty version 3", doc)

    step(7, "With the policy read_only, a turn's edit becomes a proposal; Alice applies it herself")
    current = http.expect("GET", f"{ws_path}/memory/policy", 200, user=ALICE)
    policy = http.expect(
        "PUT",
        f"{ws_path}/memory/policy",
        200,
        user=ALICE,
        body={"mode": "read_only", "expectedRevision": current["policyRevision"]},
    )
    view = run_turn(http, conv, ws, f"remember: {PROPOSED}\nWhat do you remember?")
    check(
        outcomes(view) == [(ToolName.REMEMBER, "proposal")], f"one {ToolName.REMEMBER} proposal", view["toolOutcomes"]
    )
    say("→ not committed, and the model was told so (see its tool result in the answer above)")
    generation = policy["clearGeneration"]
    edits = [{"op": "add", "line": PROPOSED}]
    say("a proposal stamped before the Clear cannot resurrect cleared memory:")
    http.expect(
        "POST",
        f"{ws_path}/memory/proposals/apply",
        409,
        user=ALICE,
        body={"proposal": {"edits": edits, "baseVersion": 3, "clearGeneration": generation - 1}},
        headers={"X-Base-Version": "3"},
    )
    say("the proposal as made after the Clear applies as Alice's own Save:")
    applied = http.expect(
        "POST",
        f"{ws_path}/memory/proposals/apply",
        200,
        user=ALICE,
        body={"proposal": {"edits": edits, "baseVersion": 3, "clearGeneration": generation}},
        headers={"X-Base-Version": "3"},
        fields=("version", "op", "bytes"),
    )
    check(applied["version"] == 4, "version 4", applied)
    doc = show_document(http, ws)
    check(PROPOSED in doc["content"], f"the document to contain {PROPOSED!r}", doc)

    entries_scene(http, conv, ws, key_session["keySessionId"], run)

    step(9, "Where to look")
    receipts = memory_receipts(http, conv)
    for receipt in receipts:
        say(f"  {receipt['turnId']}  {receipt['status']:<6} revision {receipt['revision']}  {receipt['at']}")
    say(f"Temporal UI: {stack.ui}  (each turn's workflow id is its turnId, e.g. {view['turnId']})")
    say("Its payloads are KMS-encrypted. To read them, run a codec server with the worker's environment")
    say(f"  (AWS_ENDPOINT_URL=http://{HOST}:{os.environ.get('MOTO_PORT', '5000')}, TABLE_NAME=workspace-memory,")
    say("  KMS_KEY_ID=<the stack's key ARN>): `python -m workflows.codec_server --port 8888`,")
    say(f"  then set the UI's codec endpoint to http://{HOST}:8888")
    say(f"Receipts: GET /v1/conversations/{conv}/memory-receipts")
    if stack.started:
        say("This stack was started by the demo and stops with it: run `make dev` first to browse afterwards.")
    print("\ndemo: every step answered as expected", flush=True)


def entries_scene(http: Http, conv: str, ws: str, key_session_id: str, run: str) -> None:
    """Memory entries: a fact the agent saves, a human supersedes and `asOf` still answers; a rule refused
    without a quote and saved with one; a forgotten entry gone from the index."""
    ws_path = f"/v1/workspaces/{ws}"
    step(8, "Memory entries: the agent saves a fact, Alice supersedes it, asOf reads the past; rules; forget")
    current = http.expect("GET", f"{ws_path}/memory/policy", 200, user=ALICE)
    http.expect(
        "PUT",
        f"{ws_path}/memory/policy",
        200,
        user=ALICE,
        body={"mode": "auto", "expectedRevision": current["policyRevision"]},
        fields=("mode",),
    )
    view = run_turn(http, conv, ws, "save: Deploy day | We deploy on Tuesdays\nWhat do you know?")
    check(outcomes(view) == [(ToolName.SAVE_MEMORY, "committed")], f"one {ToolName.SAVE_MEMORY}, committed", view)
    found = SAVED_ENTRY.search(view["answer"] or "")
    check(found is not None, "the tool result to name the saved entry", view["answer"])
    assert found is not None
    entry_id = found.group(1)
    entry_path = f"{ws_path}/entries/{entry_id}"
    first = http.expect("GET", entry_path, 200, user=ALICE, fields=("revision", "summary", "authorKind", "validFrom"))
    say("Alice supersedes it (PUT with X-Base-Revision: 1):")
    http.expect(
        "PUT",
        entry_path,
        200,
        user=ALICE,
        body={"type": "fact", "title": "Deploy day", "summary": "We deploy on Thursdays", "reason": "moved"},
        headers={"X-Base-Revision": "1"},
        fields=("entryId", "revision"),
    )
    now = http.expect("GET", entry_path, 200, user=ALICE, fields=("revision", "summary", "authorKind"))
    check(now["revision"] == 2 and now["summary"] == "We deploy on Thursdays", "revision 2, Thursdays", now)
    as_of = urllib.parse.quote(first["validFrom"], safe="")
    then = http.expect("GET", f"{entry_path}?asOf={as_of}", 200, user=ALICE, fields=("revision", "summary", "status"))
    check(then["revision"] == 1 and then["summary"] == "We deploy on Tuesdays", "asOf before it: revision 1", then)

    say("a rule without a quote of the user's message is refused; with one it is saved:")
    view = run_turn(http, conv, ws, "rule: Answers short | Keep answers short\nHow should you answer?")
    check(outcomes(view) == [(ToolName.SAVE_MEMORY, "invalid")], "save_memory refused", view["toolOutcomes"])
    check("QUOTE_REQUIRED" in (view["answer"] or ""), "the tool result to carry QUOTE_REQUIRED", view["answer"])
    view = run_turn(http, conv, ws, f"rule: Answers short | {RULE_QUOTE} | {RULE_QUOTE}\nHow should you answer?")
    check(outcomes(view) == [(ToolName.SAVE_MEMORY, "committed")], "the quoted rule committed", view["toolOutcomes"])

    say("Alice forgets the fact (every version; a text-free tombstone stays):")
    http.expect("DELETE", entry_path, 204, user=ALICE)
    admitted = http.expect(
        "POST",
        f"/v1/automation/conversations/conv-entries-{run}/admissions",
        201,
        automation=RUNTIME,
        body={"workspaceId": ws, "userId": ALICE, "idempotencyKey": f"entries-{run}", "keySessionId": key_session_id},
        fields=("mode",),
    )
    recalled = http.expect(
        "GET",
        f"/v1/automation/workspaces/{ws}/memory?purpose=recall",
        200,
        automation=RUNTIME,
        headers={"X-Admission-Id": admitted["admissionId"], "X-Delivery-Credential": admitted["credential"]},
        fields=("status", "revision"),
    )
    recalled_block = recalled["block"]
    entries_part = recalled_block[recalled_block.index("### Rules") :]
    block("the recalled rules and index", entries_part)
    check(
        "Answers short — Keep answers short" in entries_part and entry_id not in recalled_block,
        "the rule recalled, the forgotten fact gone from the index",
        entries_part,
    )


def memory_receipts(http: Http, conv: str) -> list[dict[str, Any]]:
    """Every receipt of the conversation (Alice's: only its owner reads them), a page at a time."""
    receipts: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = "" if cursor is None else "?cursor=" + urllib.parse.quote(cursor, safe="")
        page = http.expect(
            "GET",
            f"/v1/conversations/{conv}/memory-receipts{query}",
            200,
            user=ALICE,
            summary=lambda body: f"{len(body['receipts'])} receipts, one per model call (never text):",
        )
        receipts += page["receipts"]
        cursor = page["nextCursor"]
        if cursor is None:
            return receipts
