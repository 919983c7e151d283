"""Schemathesis against the local stack: every route of the served OpenAPI document, a bounded number of
generated requests each (valid and deliberately invalid ones, deterministic), checked for no 500, no status
the document does not list for the route, an answer in the documented shape, and no error code the document
does not list for the route and status.

The requests go through the local gateway with its dev auth (a real owner, an automation caller). Half of
the generated requests are aimed at real things - a seeded workspace with a document, a live key session,
an admission and its working-notes session - so they reach past the 404 of an unknown id; the other half
keep the generated ids. 12 requests per route in `make test`, 100 in `make soak` (tests/depth.py). Each
module's teardown prints how many requests were sent and how many answered 5xx (`-s` shows it).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from scripts.openapi.generate import http_routes
from tests.depth import soaking
from tests.support import Api, new_user

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLES = 100 if soaking() else 12
"""Generated requests per route: 12 in `make test`, 100 in `make soak` (WM_TEST_DEPTH, tests/depth.py)."""
RUNTIME = "schemathesis-runtime"


@schemathesis.check
def error_code_documented(ctx: Any, response: Any, case: Any) -> bool | None:
    """An error answer's code is one the document lists for its route and status (`x-error-codes`, derived
    from ROUTE_ERRORS): generated bad input finds the codes a route answers but does not declare."""
    operation = case.operation.schema.raw_schema["paths"][case.operation.path][case.operation.method.lower()]
    documented = operation["responses"].get(str(response.status_code), {})
    if "x-error-codes" not in documented:
        return None  # a success, or API Gateway's own throttling (no code)
    code = json.loads(response.content)["error"]["code"]
    assert code in documented["x-error-codes"], f"{case.operation.label} answered {response.status_code} {code}"
    return True


CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance, error_code_documented]
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
"""Valid requests, and requests that break the schema on purpose (each must be a documented 4xx, never a 500)."""
ROUTES = [route.route_key for route in http_routes()]
AUTH = {route.route_key: route.auth for route in http_routes()}


@dataclass(frozen=True)
class Seeded:
    """Real ids a generated request may be pointed at."""

    owner: str
    workspace: str
    key_session: str
    conversation: str
    session: str
    admission_id: str
    credential: str


@pytest.fixture(scope="module")
def owned(api: Api) -> tuple[str, str]:
    """An owner and their workspace with a document (module-wide)."""
    owner = new_user("fuzz-owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n- the seeded line\n", 0).status_code == 200
    return owner, ws


@pytest.fixture
def seeded(api: Api, owned: tuple[str, str]) -> Seeded:
    """AI switched (back) on, a fresh key session and admission for each route: the routes fuzzed before may
    have switched AI off, revoked the key session or retired the admission (a capture)."""
    owner, ws = owned
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    key_session = api.key_session(owner, ws)
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    body = {"workspaceId": ws, "userId": owner, "idempotencyKey": "fuzz", "keySessionId": key_session}
    admitted = api.call(
        "POST",
        f"/v1/automation/conversations/{conv}/admissions",
        automation=RUNTIME,
        json={**body, "sessionId": session},
    )
    assert admitted.status_code == 201, admitted.text
    admission = admitted.json()
    return Seeded(owner, ws, key_session, conv, session, admission["admissionId"], admission["credential"])


@pytest.fixture(scope="module")
def schema(gateway_url: str) -> Any:
    """The document as the stack serves it (`GET /v1/openapi.json`), not the file on disk."""
    return schemathesis.openapi.from_url(f"{gateway_url}/v1/openapi.json")


def _aim(case: Any, seeded: Seeded, declared: set[str], number: int) -> None:
    """Point the case at the seeded things: real ids (valid for their schemas: they are real ids), the
    admission's headers where the route takes them, and a small version number where one is asked for."""
    real = {
        "ws": seeded.workspace,
        "conv": seeded.conversation,
        "sid": seeded.session,
        "keySessionId": seeded.key_session,
        "version": number,
    }
    for name in list(case.path_parameters or {}):
        if name in real:
            case.path_parameters[name] = real[name]
    headers = {
        "x-admission-id": seeded.admission_id,
        "x-delivery-credential": seeded.credential,
        "x-base-version": str(number),
        "idempotency-key": f"memory:{seeded.admission_id}",
    }
    case.headers = {**(case.headers or {}), **{k: v for k, v in headers.items() if k in declared}}
    if "purpose" in (case.query or {}):
        case.query["purpose"] = "recall"
    if isinstance(case.body, dict):
        body: dict[str, Any] = case.body
        for field, value in (
            ("workspaceId", seeded.workspace),
            ("userId", seeded.owner),
            ("keySessionId", seeded.key_session),
            ("admissionId", seeded.admission_id),
            ("credential", seeded.credential),
        ):
            if field in body:
                body[field] = value


def _auth(route_key: str, seeded: Seeded) -> dict[str, str]:
    kind = AUTH[route_key]
    if kind == "jwt":
        return {"Authorization": f"Bearer dev:{seeded.owner}"}
    if kind == "iam":
        return {"Authorization": f"Bearer automation:{RUNTIME}"}
    return {}


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    """The session every generated request is sent on, counting each status answered; the count of requests
    and of 5xx is printed at the module's end."""
    seen: Counter[int] = Counter()

    def count(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        seen[response.status_code] += 1

    with requests.Session() as counting:
        counting.hooks["response"].append(count)
        yield counting
    errors = sum(n for status, n in seen.items() if status >= 500)
    print(f"\nschemathesis: {seen.total()} requests, {errors} answered 5xx, by status {dict(sorted(seen.items()))}")


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("route_key", ROUTES)
def test_route_answers_as_documented(
    route_key: str, schema: Any, seeded: Seeded, gateway_url: str, session: requests.Session
) -> None:
    fuzz(route_key, schema, seeded, gateway_url, session, EXAMPLES)


def fuzz(
    route_key: str, schema: Any, seeded: Seeded, gateway_url: str, session: requests.Session, examples: int
) -> None:
    """`examples` generated requests at one route, each checked against the document."""
    method, path = route_key.split(" ", 1)
    operation = schema[path][method]
    parameters = schema.raw_schema["paths"][path][method.lower()].get("parameters", [])
    declared = {p["name"] for p in parameters if p["in"] == "header"}

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=st.one_of(*(operation.as_strategy(generation_mode=mode) for mode in MODES)),
        aimed=st.booleans(),
        number=st.integers(0, 4),
    )
    def run(case: Any, aimed: bool, number: int) -> None:
        if aimed:
            _aim(case, seeded, declared, number)
        case.call_and_validate(
            base_url=gateway_url, session=session, headers=_auth(route_key, seeded), checks=CHECKS, timeout=180
        )

    run()
