"""Every route of template.yaml, attacked with bad input through the local gateway with real credentials (a
workspace's owner, a live key session and admission, real ids), so each request gets past auth into parsing.

A fixed set of attacks per route: bodies that are not I-JSON or not JSON at all (deep nesting, invalid UTF-8,
wrong or non-ASCII content types, over the size cap, NaN and Infinity, duplicate keys, lone surrogates),
wrong JSON types at the top level, non-ASCII path segments and header values, bad query strings, bodies on
GET routes, and queries that reduce to no search terms. Every answer is below 500; every error is the
envelope with a code from the registry (and the exact code where the attack has one); no answer and no log
line holds the marker the attacks carry; and a scan of the table before and after each route's batch is
identical. Before api/body.py and the search fix, deep nesting, text/plain, XML and the no-term queries were
500s (and schemathesis failed on the search routes).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

import scripts.openapi.route_errors  # noqa: F401  (imports every error class, so the registry below is complete)
from scripts.localstack.resources import LocalResources
from scripts.localstack.template import Route, load_template, routes
from tests.support import Api, FunctionLogs, new_user, scan_all
from workspace_memory.api.body import ARCHIVE_BODY_BYTES, MAX_BODY_BYTES, MAX_DEPTH
from workspace_memory.api.errors import registered_codes

pytestmark = pytest.mark.integration

RUNTIME = "fuzz-runtime"
MARKER = "MARKER-fuzz-5e1c"
"""Carried by every attack body: no answer and no log line may hold it."""
ROUTES = routes(load_template())
NON_ASCII = "\u00e9t\u00e9 \u202e \U0001f4a5"


@dataclass(frozen=True)
class Attack:
    name: str
    body: bytes | None = None
    content_type: str | bytes | None = "application/json"
    expect: tuple[int, str] | None = None
    """The exact status and code, when the attack has one; otherwise any answer below 500."""
    path: dict[str, str] = field(default_factory=dict)
    """Path parameters to replace (percent-encoded as sent)."""
    headers: dict[str, str | bytes] = field(default_factory=dict)
    query: str | None = None


def _json(text: str) -> bytes:
    return text.encode("utf-8")


BAD_BODIES = [
    Attack("nested 10,000 arrays", _json("[" * 10_000 + f'"{MARKER}"' + "]" * 10_000), expect=(400, "BODY_TOO_DEEP")),
    Attack("nested 10,000 objects", _json('{"a":' * 10_000 + "1" + "}" * 10_000), expect=(400, "BODY_TOO_DEEP")),
    Attack("one level too deep", _json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)), expect=(400, "BODY_TOO_DEEP")),
    Attack("invalid UTF-8", b'{"content": "\xff\xfe' + MARKER.encode() + b'"}', expect=(400, "INVALID_REQUEST")),
    Attack("text/plain", _json(f'{{"content": "{MARKER}"}}'), "text/plain", (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("XML", _json(f"<content>{MARKER}</content>"), "application/xml", (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("a form", _json(f"content={MARKER}"), "application/x-www-form-urlencoded", (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("multipart without boundary", _json(MARKER), "multipart/form-data", (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("JSON in Latin-1", _json("{}"), "application/json; charset=latin-1", (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("non-ASCII type", _json("{}"), NON_ASCII.encode("utf-8"), (415, "UNSUPPORTED_MEDIA_TYPE")),
    Attack("NaN", _json(f'{{"content": "{MARKER}", "n": NaN}}'), expect=(400, "INVALID_REQUEST")),
    Attack("-Infinity", _json(f'{{"content": "{MARKER}", "n": -Infinity}}'), expect=(400, "INVALID_REQUEST")),
    Attack("duplicate keys", _json(f'{{"content": "{MARKER}", "content": "x"}}'), expect=(400, "INVALID_REQUEST")),
    Attack("lone surrogate", _json(f'{{"content": "{MARKER} \\ud800"}}'), expect=(400, "INVALID_REQUEST")),
    Attack("lone surrogate key", _json(f'{{"\\udc00": "{MARKER}"}}'), expect=(400, "INVALID_REQUEST")),
    Attack(
        "5,000-digit integer", _json(f'{{"content": "{MARKER}", "n": {"9" * 5000}}}'), expect=(400, "INVALID_REQUEST")
    ),
    Attack("truncated", _json(f'{{"content": "{MARKER}'), expect=(400, "INVALID_REQUEST")),
    Attack("trailing data", _json(f'{{"content": "{MARKER}"}} {{}}'), expect=(400, "INVALID_REQUEST")),
]
"""Refused by api/body.py on every route, with or without a body of its own."""

WRONG_TYPES = [
    Attack(f"top-level {name}", _json(text), expect=(400, "INVALID_REQUEST"))
    for name, text in [("array", f'["{MARKER}"]'), ("string", f'"{MARKER}"'), ("number", "7"), ("null", "null")]
]
"""Well-formed JSON of the wrong type: refused by the route's request model."""

JUNK_SEGMENTS = ["%C3%A9t%C3%A9", "%F0%9F%92%A5", "%E2%80%AE", "%00", "%FF%FE", "x" * 1500]
BAD_QUERIES = [
    "%FF=%FE",
    "limit=%00",
    "limit=-1&limit=5",
    "limit=1e9",
    "cursor=%C3%A9%00",
    "q=" + "x" * 3000,
    "=&&=",
    "asOf=%F0%9F%92%A5",
    "scope=%00&type=%00&status=%00&key=%00&k=0",
]
NO_TERMS = ["the", "a", "9", "%00", "%21%21"]
"""Queries the search tokenizer reduces to nothing: 200 (embeddings alone, or no results)."""


CAPS = {"ExportsFunction": ARCHIVE_BODY_BYTES}
"""A function's own body cap (the exports function takes archives); every other one has `MAX_BODY_BYTES`."""


def over_the_cap(route: Route) -> Attack:
    cap = CAPS.get(route.function, MAX_BODY_BYTES)
    return Attack(
        "over the cap", _json(f'{{"content": "{MARKER}' + "x" * cap + '"}'), expect=(413, "PAYLOAD_TOO_LARGE")
    )


def attacks_for(route: Route, takes_body: bool, headers: set[str]) -> list[Attack]:
    found = [*BAD_BODIES, over_the_cap(route)]
    if takes_body:
        found += WRONG_TYPES
    names = [p.strip("{}") for p in route.path.split("/") if p.startswith("{")]
    found += [Attack(f"path {junk[:12]}", path=dict.fromkeys(names, junk)) for junk in JUNK_SEGMENTS if names]
    if headers:
        for spelled in (NON_ASCII.encode("utf-8"), b"\xff\xfe", "9" * 2000):
            found.append(Attack(f"headers {spelled[:6]!r}", headers=dict.fromkeys(headers, spelled)))
    if route.auth != "none":
        found.append(Attack("non-ASCII credential", headers={"authorization": b"Bearer dev:\xc3\xa9"}))
    if route.method == "GET":
        found += [Attack(f"query {q[:20]}", query=q) for q in BAD_QUERIES]
        found.append(Attack("a JSON body on a GET", _json(f'{{"q": "{MARKER}"}}')))
        if route.path.endswith("/search"):
            found += [Attack(f"no terms {q}", query=f"q={q}", expect=(200, "")) for q in NO_TERMS]
    return found


@dataclass(frozen=True)
class World:
    owner: str
    values: dict[str, str]
    """Real path parameter values, by the template's names."""
    credentials: dict[str, str]
    """Every header a route may declare, with a value that gets the request past it."""


@pytest.fixture(scope="module")
def world(api: Api) -> World:
    owner = new_user("fuzz")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    assert api.save(owner, ws, "# Memory\n- deploys on Fridays\n", 0).status_code == 200
    body = {"scope": "workspace", "type": "fact", "title": "Deploy window", "summary": "releases on Tuesdays"}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert created.status_code == 201, created.text
    key_session = api.key_session(owner, ws)
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    admitted = api.call(
        "POST",
        f"/v1/automation/conversations/{conv}/admissions",
        automation=RUNTIME,
        json={"workspaceId": ws, "userId": owner, "idempotencyKey": "fuzz", "keySessionId": key_session}
        | {"sessionId": session},
    )
    assert admitted.status_code == 201, admitted.text
    admission = admitted.json()
    values = {
        "ws": ws,
        "userId": owner,
        "keySessionId": key_session,
        "entryId": created.json()["entryId"],
        "candidateId": "cand_fuzz",
        "conv": conv,
        "turnId": "turn_fuzz",
        "sid": session,
        "version": "1",
        "file": "app.js",
    }
    credentials = {
        "x-admission-id": admission["admissionId"],
        "x-delivery-credential": admission["credential"],
        "idempotency-key": f"memory:{admission['admissionId']}",
        "x-base-version": "1",
        "x-base-revision": "1",
        "x-expected-revision": "0",
        "x-confirm-workspace": "ws_not_this_one",  # a body attack that got through must still not delete
    }
    return World(owner, values, credentials)


@pytest.fixture(scope="module")
def document(api: Api) -> dict[str, Any]:
    served: dict[str, Any] = api.call("GET", "/v1/openapi.json").json()
    return served


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as kept:
        yield kept


def send(session: requests.Session, base: str, route: Route, world: World, attack: Attack) -> requests.Response:
    values = world.values | attack.path
    path = route.path
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    headers: dict[str, str | bytes] = dict(world.credentials)
    if route.auth == "jwt":
        headers["authorization"] = f"Bearer dev:{world.owner}"
    elif route.auth == "iam":
        headers["authorization"] = f"Bearer automation:{RUNTIME}"
    if attack.content_type is not None and attack.body is not None:
        headers["content-type"] = attack.content_type
    headers |= attack.headers
    url = f"{base}{path}" + (f"?{attack.query}" if attack.query is not None else "")
    return session.request(route.method, url, data=attack.body, headers=headers, timeout=60)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("route", ROUTES, ids=[r.route_key for r in ROUTES])
def test_bad_input_never_fails_the_server_nor_changes_anything(
    route: Route,
    world: World,
    document: dict[str, Any],
    session: requests.Session,
    api: Api,
    resources: LocalResources,
    function_logs: FunctionLogs,
) -> None:
    operation = document["paths"][route.path][route.method.lower()]
    declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
    codes = registered_codes()
    before = stored(resources)
    failures: list[str] = []
    with function_logs.captured() as logs:
        for attack in attacks_for(route, "requestBody" in operation, declared):
            answer = send(session, api.base, route, world, attack)
            failures += [f"{attack.name}: {problem}" for problem in problems(answer, attack, codes)]
            failures += [f"{attack.name}: {problem}" for problem in undeclared(answer, operation)]
    assert failures == []
    assert MARKER not in logs.getvalue()
    assert stored(resources) == before


ADVISORY = ("readCount", "lastReadAt")
"""An entry head's read counts: a GET that succeeds (it ignores a query parameter it does not take) bumps them
by design, on a background thread, so they may even land during a later batch."""


def stored(resources: LocalResources) -> list[dict[str, Any]]:
    """The table, but for the advisory read counts."""
    return [{k: v for k, v in item.items() if k not in ADVISORY} for item in scan_all(resources)]


def problems(answer: requests.Response, attack: Attack, codes: frozenset[str]) -> list[str]:
    """What is wrong with one answer: a 5xx, an error outside the envelope or the registry, the wrong code,
    or the attack's marker echoed."""
    found = []
    if answer.status_code >= 500:
        found.append(f"{answer.status_code} {answer.text[:200]}")
    if MARKER in answer.text:
        found.append("the answer echoes the input")
    if answer.status_code >= 400:
        error = (_json_or_none(answer) or {}).get("error")
        if not isinstance(error, dict) or error.get("code") not in codes or not error.get("message"):
            found.append(f"not the envelope with a registered code: {answer.status_code} {answer.text[:200]}")
        elif attack.expect is not None and (answer.status_code, error["code"]) != attack.expect:
            found.append(f"{answer.status_code} {error['code']}, not {attack.expect}")
    elif attack.expect is not None and answer.status_code != attack.expect[0]:
        found.append(f"{answer.status_code}, not {attack.expect[0]}")
    return found


def undeclared(answer: requests.Response, operation: dict[str, Any]) -> list[str]:
    """An error code the document does not list for this route and status (`x-error-codes`, derived from
    ROUTE_ERRORS): the route's declaration has fallen behind what it answers."""
    error = (_json_or_none(answer) or {}).get("error") if answer.status_code >= 400 else None
    listed = operation["responses"].get(str(answer.status_code), {}).get("x-error-codes", [])
    if isinstance(error, dict) and error.get("code") not in listed:
        return [f"{answer.status_code} {error.get('code')} is not among its documented codes {listed}"]
    return []


def _json_or_none(answer: requests.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return None
