"""`make demo`: a scripted scenario, end to end, against the local stack — HTTP only, stdlib only (and the
tool registry `workflows.tools`, for the tool names the turns report).

Uses the stack already answering `GET $API/v1/health` (API defaults to http://127.0.0.1:$GATEWAY_PORT, port
3000); otherwise starts `python -m scripts.localstack` (same environment, so MOTO_PORT, GATEWAY_PORT,
TEMPORAL_PORT, TEMPORAL_UI_PORT and LOCAL_STATE_DIR apply), runs the scenario and stops it with SIGINT.

The scenario: Alice sets up a shared workspace with the policy `auto`; saves a document; a turn remembers a
line (committed through the fence); a turn writes a working note and a later turn of the same session sees
it; Alice opens a key session for her agent runtime, which admits a capture under it, Alice clears the memory
first, and the stale capture is refused (`policy`); with the policy `read_only` a turn's edit becomes a
proposal that Alice applies herself.

Exit 0 when every step answered as expected; 1 (saying what was expected) otherwise.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from workflows.tools import ToolName

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
READY_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 60.0
RESIGNAL_SECONDS = 3.0
TURN_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.25
HTTP_TIMEOUT_SECONDS = 30.0

ALICE = "alice"
RUNTIME = "demo"  # the automation caller's name: `Authorization: Bearer automation:demo`
SECRET_FIELDS = frozenset({"credential", "X-Delivery-Credential"})

FIRST_DOCUMENT = "# Team memory\n- We deploy on Tuesdays\n"
REMEMBERED = "- Feature flags gate risky changes"
NOTE = "ask Bob about the release train"
REFUSED_LINE = "- Staging mirrors production"
PROPOSED = "- Releases ship behind a flag"


@dataclass(frozen=True)
class StackInfo:
    """Where the stack's Temporal UI is, and whether the demo started the stack (and will stop it)."""

    ui: str
    started: bool


class DemoFailure(Exception):
    """A step did not answer as expected; the message says what was expected and what came back."""


# -- HTTP ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _redacted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("…" if k in SECRET_FIELDS else _redacted(v)) for k, v in value.items()}
    return value


def _pick(body: Any, fields: tuple[str, ...] | None) -> Any:
    if fields is None or not isinstance(body, dict):
        return body
    return {k: body[k] for k in fields if k in body}


class Http:
    """Speaks the local gateway's dev auth and prints each exchange as one request and one response line."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def call(
        self,
        method: str,
        path: str,
        *,
        user: str | None = None,
        automation: str | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        hdrs = dict(headers or {})
        if user is not None:
            hdrs["Authorization"] = f"Bearer dev:{user}"
        if automation is not None:
            hdrs["Authorization"] = f"Bearer automation:{automation}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, headers=hdrs, method=method)
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response:
                return Reply(response.status, _parse(response.read()))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, _parse(exc.read()))
        except OSError as exc:
            raise DemoFailure(f"{method} {path}: no answer from {self.base} ({exc})") from exc

    def expect(
        self,
        method: str,
        path: str,
        status: int,
        *,
        user: str | None = None,
        automation: str | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        fields: tuple[str, ...] | None = None,
        summary: Callable[[Any], str] | None = None,
        quiet: bool = False,
    ) -> Any:
        """One exchange that must answer `status`; prints it unless quiet.

        The response line shows the body trimmed to `fields`, or `summary(body)` when given.
        """
        if not quiet:
            who = f"[{user}]" if user is not None else f"[automation:{automation}]" if automation else "[anonymous]"
            extra = "".join(f"  {k}: {v}" for k, v in _redacted(dict(headers or {})).items())
            payload = f"  {_show(_redacted(body))}" if body is not None else ""
            print(f"  → {method} {path}  {who}{extra}{payload}")
        reply = self.call(method, path, user=user, automation=automation, body=body, headers=headers)
        if not quiet:
            shown = (
                summary(reply.body)
                if summary and reply.status == status
                else _show(_redacted(_pick(reply.body, fields)))
            )
            print(f"  ← {reply.status} {shown}")
        if reply.status != status:
            raise DemoFailure(f"{method} {path}: expected HTTP {status}, got {reply.status}: {_show(reply.body)}")
        return reply.body


def _parse(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def check(condition: bool, expected: str, got: Any) -> None:
    if not condition:
        raise DemoFailure(f"expected {expected}; got {_show(got)}")


def healthy(api: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api}/v1/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except (OSError, ValueError):
        return False


# -- the transcript -----------------------------------------------------------------------------------------


def step(number: int, title: str) -> None:
    print(f"\n== {number}. {title}", flush=True)


def say(line: str) -> None:
    print(f"  {line}", flush=True)


def block(label: str, text: str) -> None:
    print(f"  {label}:")
    for line in text.splitlines() or [""]:
        print(f"    | {line}")


def show_document(http: Http, ws: str) -> dict[str, Any]:
    doc: dict[str, Any] = http.expect(
        "GET", f"/v1/workspaces/{ws}/memory", 200, user=ALICE, fields=("version", "bytes")
    )
    block(f"document v{doc['version']}", doc["content"])
    return doc


def run_turn(http: Http, conv: str, ws: str, message: str, session: str | None = None) -> dict[str, Any]:
    """Starts a turn, polls its status until it is no longer running, and prints what it came to."""
    body: dict[str, Any] = {"workspaceId": ws, "message": message, "idempotencyKey": uuid.uuid4().hex}
    if session is not None:
        body["sessionId"] = session
    started = http.expect("POST", f"/v1/conversations/{conv}/turns", 202, user=ALICE, body=body)
    turn_id = started["turnId"]
    path = f"/v1/conversations/{conv}/turns/{turn_id}"
    say(f"… polling GET {path} every {POLL_SECONDS}s while status is running")
    deadline = time.monotonic() + TURN_TIMEOUT_SECONDS
    while True:
        view: dict[str, Any] = http.expect("GET", path, 200, user=ALICE, quiet=True)
        if view["status"] != "running":
            break
        if time.monotonic() > deadline:
            raise DemoFailure(
                f"turn {turn_id}: expected it to finish within {TURN_TIMEOUT_SECONDS:.0f}s; still running "
                "(is the turn worker up? `make dev` prints its line)"
            )
        time.sleep(POLL_SECONDS)
    say(f"← 200 status={view['status']} rounds={view['rounds']}")
    block("answer", view["answer"] or "(none)")
    say("tool outcomes: " + (", ".join(_outcome(o) for o in view["toolOutcomes"]) or "(none)"))
    say("receipts: " + ", ".join(f"round {r['round']}: {r['status']} r{r['revision']}" for r in view["receipts"]))
    check(view["status"] == "completed", f"turn {turn_id} to complete", view)
    return view


def _outcome(outcome: dict[str, Any]) -> str:
    extra = "".join(f" {k}={outcome[k]}" for k in ("version", "predicate") if k in outcome)
    return f"{outcome['tool']} → {outcome['outcome']}{extra}"


def outcomes(view: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["tool"], o["outcome"]) for o in view["toolOutcomes"]]


# -- the scenario -------------------------------------------------------------------------------------------


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
        body={"ttlSeconds": 900},
        fields=("keySessionId", "scopes"),
    )
    check(
        key_session["scopes"] == ["memory:read", "memory:write", "notes"],
        "a key session with all three scopes",
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

    step(8, "Where to look")
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


# -- the stack ----------------------------------------------------------------------------------------------


def api_url() -> str:
    explicit = os.environ.get("API", "").strip()
    if explicit:
        return explicit.rstrip("/")
    return f"http://{HOST}:{os.environ.get('GATEWAY_PORT', '3000').strip() or '3000'}"


def default_ui() -> str:
    port = os.environ.get("TEMPORAL_UI_PORT", "8233").strip()
    if port.lower() == "off":
        return "off (TEMPORAL_UI_PORT=off)"
    return f"http://{HOST}:{port}/namespaces/{os.environ.get('TEMPORAL_NAMESPACE', 'default')}/workflows"


def stack_environment(api: str) -> dict[str, str]:
    """The stack inherits our environment; its gateway port follows an explicit loopback `API`."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if os.environ.get("API", "").strip():
        parsed = urllib.parse.urlsplit(api)
        if parsed.hostname not in (HOST, "localhost") or parsed.port is None:
            raise DemoFailure(f"no API answers at {api}; unset API to let the demo start a local stack")
        env["GATEWAY_PORT"] = str(parsed.port)
    return env


def _relay(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


class Stack:
    """`python -m scripts.localstack` in a process group of its own; its output is kept, shown on failure."""

    def __init__(self, env: dict[str, str]) -> None:
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scripts.localstack"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            process_group=0,  # our Ctrl-C handling stops it, in order
        )
        assert self.proc.stdout is not None
        threading.Thread(target=_relay, args=(self.proc.stdout, self._lines), daemon=True).start()

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                raise DemoFailure(f"the local stack exited before 'ready:'\n{self.transcript()}")
            self.output.append(line)
            if line.startswith("ready:"):
                return
        raise DemoFailure(f"the local stack printed no 'ready:' within {timeout:.0f}s\n{self.transcript()}")

    def banner(self, label: str) -> str | None:
        for line in self.output:
            if line.startswith(label):
                return line[len(label) :].strip()
        return None

    def stop(self, timeout: float = STOP_TIMEOUT_SECONDS) -> int:
        """SIGINT (as Ctrl-C) until it exits; SIGKILL only if it has not stopped within `timeout`.

        SIGINT is re-sent every few seconds: one that lands before the stack has installed its handler is
        lost when it inherited an ignored SIGINT (as under `make demo &`). Its handler only sets an event,
        so a repeat during an orderly shutdown changes nothing; but once the stack has printed `stopped` it
        is tearing the interpreter down, which restores the default SIGINT action, so a repeat then would
        kill it (exit -2): no SIGINT is sent after `stopped`. Our own SIGINT/SIGTERM are ignored meanwhile,
        so a second Ctrl-C cannot abandon the stack half-stopped; the wait is bounded.
        """
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            deadline = time.monotonic() + timeout
            while self.proc.poll() is None and (remaining := deadline - time.monotonic()) > 0:
                if not self._said_stopped():
                    self.proc.send_signal(signal.SIGINT)
                with suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=min(remaining, RESIGNAL_SECONDS))
            if self.proc.poll() is None:
                print(f"warning: the local stack did not stop within {timeout:.0f}s; killing it", file=sys.stderr)
                self.proc.kill()
            code = self.proc.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self._drain()
        return code

    def stopped_cleanly(self, code: int) -> bool:
        return code == 0 and self._said_stopped()

    def _said_stopped(self) -> bool:
        self._drain_nowait()
        return "stopped" in (line.strip() for line in self.output)

    def _drain(self) -> None:
        deadline = time.monotonic() + 5.0
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                return
            if line is None:
                return
            self.output.append(line)

    def transcript(self, last: int = 200) -> str:
        self._drain_nowait()
        skipped = max(0, len(self.output) - last)
        head = f"  stack | … {skipped} earlier lines\n" if skipped else ""
        return head + "".join(f"  stack | {line}" for line in self.output[skipped:])

    def _drain_nowait(self) -> None:
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                return
            self.output.append(line)


def _terminate(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through `finally`, which stops the stack we started


@contextmanager
def local_stack(api: str) -> Iterator[StackInfo]:
    """Uses the stack serving `api`, or starts one here, stopped on exit."""
    if healthy(api):
        print(f"using the stack already serving {api}", flush=True)
        yield StackInfo(default_ui(), started=False)
        return
    env = stack_environment(api)
    print(f"no API at {api}: starting `python -m scripts.localstack` (up to {READY_TIMEOUT_SECONDS:.0f}s)", flush=True)
    previous = signal.signal(signal.SIGTERM, _terminate)
    stack = Stack(env)
    failed = show_output = False
    try:
        stack.wait_ready()
        # The first request cold-starts the handler (imports, clients): on a busy machine that takes seconds.
        if not healthy(api, timeout=HTTP_TIMEOUT_SECONDS):
            raise DemoFailure(f"the stack is ready but {api}/v1/health does not answer 200\n{stack.transcript()}")
        ui = stack.banner("Temporal UI")
        namespace = env.get("TEMPORAL_NAMESPACE", "default")
        ui_url = f"{ui}/namespaces/{namespace}/workflows" if ui and ui.startswith("http") else ui or default_ui()
        print(f"stack ready: API {api}, Temporal UI {ui_url}", flush=True)
        show_output = True  # from here on, a failed step may be explained by the stack's (worker's) output
        yield StackInfo(ui_url, started=True)
    except DemoFailure:
        failed = True
        raise
    except BaseException:
        failed, show_output = True, False
        raise
    finally:
        code = stack.stop()
        signal.signal(signal.SIGTERM, previous)
        if stack.stopped_cleanly(code):
            print("\nlocal stack stopped (exit 0)", flush=True)
        elif not failed:
            raise DemoFailure(f"the local stack did not stop cleanly (exit {code})\n{stack.transcript()}")
        else:
            print(f"\nlocal stack stopped (exit {code})", flush=True)
        if failed and show_output:
            print(f"the local stack's output:\n{stack.transcript()}", file=sys.stderr, flush=True)


def main() -> int:
    api = api_url()
    try:
        with local_stack(api) as stack:
            scenario(Http(api), stack)
    except DemoFailure as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr, flush=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
