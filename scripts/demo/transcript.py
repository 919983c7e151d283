"""The demo's transcript: each HTTP exchange as one request and one response line (secrets redacted), the
steps and blocks around them, and a turn polled until it has finished."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from scripts.localstack.client import DevClient

TURN_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.25
ALICE = "alice"
SECRET_FIELDS = frozenset({"credential", "X-Delivery-Credential"})


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

    def __init__(self, client: DevClient) -> None:
        self.client = client

    def expect(
        self,
        method: str,
        path: str,
        status: int,
        *,
        user: str | None = None,
        automation: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        fields: tuple[str, ...] | None = None,
        summary: Callable[[Any], str] | None = None,
        quiet: bool = False,
    ) -> Any:
        """One exchange that must answer `status`; prints it unless quiet.

        The response line shows the body trimmed to `fields`, or `summary(body)` when given.
        """
        if not quiet:
            who = f"[{user}]" if user is not None else f"[automation:{automation}]" if automation else "[anonymous]"
            extra = "".join(f"  {k}: {v}" for k, v in _redacted(headers or {}).items())
            payload = f"  {_show(_redacted(body))}" if body is not None else ""
            print(f"  → {method} {path}  {who}{extra}{payload}")
        try:
            response = self.client.call(method, path, user=user, automation=automation, json=body, headers=headers)
        except requests.RequestException as exc:
            raise DemoFailure(f"{method} {path}: no answer from {self.client.base} ({exc})") from exc
        reply = Reply(response.status_code, _parse(response.content))
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
