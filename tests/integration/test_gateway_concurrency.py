"""The local gateway runs one request at a time per execution environment, each environment a process of its
own, as Lambda does: concurrent requests never answer as each other.

Powertools keeps the current event on the resolver class, so handlers sharing an interpreter read each other's
requests: an identity, a route or a body of another caller. A browser page sends requests in parallel as a
matter of course, and so do agent runtimes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest
import requests

from tests.integration.document.test_races import run_together
from tests.integration.turn_support import turn_result
from tests.support import RUNTIME, Api, admission_headers, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.admission import AdmissionRef

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROUNDS = 30
TENANTS = 6
HAMMER_ROUNDS = 4
CLIENTS = 24


def test_concurrent_requests_to_two_routes_of_one_function_each_get_their_own_answer(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    entries = f"/v1/workspaces/{ws}/entries"
    candidates = f"/v1/workspaces/{ws}/candidates"
    for _ in range(ROUNDS):
        listed, pending = run_together(
            [lambda: api.call("GET", entries, user=owner), lambda: api.call("GET", candidates, user=owner)]
        )
        assert (listed.status_code, pending.status_code) == (200, 200), (listed.text, pending.text)
        entry_page, candidate_page = listed.json(), pending.json()
        assert (sorted(entry_page), entry_page["entries"], entry_page["nextCursor"]) == (
            ["budgets", "entries", "hidden", "nextCursor"],
            [],
            None,
        )
        assert candidate_page == {"candidates": [], "nextCursor": None}


# -- many users at once ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    """A user with a private workspace (AI on, `auto`) whose every text carries the user's own marker."""

    user: str
    ws: str
    marker: str
    admission: dict[str, Any]
    key_session: str


def _ok(response: requests.Response, status: int, what: str) -> dict[str, Any]:
    assert response.status_code == status, f"{what}: {response.status_code} {response.text[:300]}"
    body: dict[str, Any] = response.json()
    return body


def _tenant(api: Api) -> Tenant:
    user, marker = new_user("tenant"), f"mk{uuid.uuid4().hex}"
    made = api.call("POST", "/v1/workspaces", user=user, json={"name": f"ws {marker}", "shareType": "private"})
    ws = str(_ok(made, 201, "create")["workspaceId"])
    _ok(api.call("PUT", f"/v1/workspaces/{ws}/ai", user=user, json={"enabled": True}), 200, "ai")
    policy = {"mode": "auto", "expectedRevision": 0}
    _ok(api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=user, json=policy), 200, "policy")
    _ok(api.save(user, ws, _document(marker, 0), 0), 200, "first save")
    key_session = api.key_session(user, ws)
    admission = _admit(api, user, ws, key_session, f"conv-{marker}")
    return Tenant(user, ws, marker, admission, key_session)


def _document(marker: str, round_: int) -> str:
    return f"# {marker}\n- {marker} round {round_}\n"


def _admit(api: Api, user: str, ws: str, key_session: str, conv: str) -> dict[str, Any]:
    """An admission checked as the hammer checks every call (the conversation doubles as idempotency key)."""
    return _ok(api.admit(conv, ws, user, key_session, key=conv), 201, "admission")


class Hammer:
    """Each call of one tenant, checked: its own status, and nothing of another tenant in the answer."""

    def __init__(self, api: Api, tenants: list[Tenant]) -> None:
        self.api = api
        self.markers = [t.marker for t in tenants]
        self.turns: dict[str, Tenant] = {}

    def only_own(self, tenant: Tenant, text: str, what: str) -> None:
        assert tenant.marker in text, f"{what}: the caller's own marker is missing"
        foreign = [m for m in self.markers if m != tenant.marker and m in text]
        assert foreign == [], f"{what}: another tenant's text in the answer"

    def calls(self, tenant: Tenant, round_: int) -> list[Callable[[], None]]:
        return [
            lambda: self.read(tenant),
            lambda: self.read(tenant),
            lambda: self.workspace(tenant),
            lambda: self.save(tenant, round_),
            lambda: self.recall(tenant),
            lambda: self.admit(tenant, round_),
            lambda: self.entry(tenant, round_),
            lambda: self.turn(tenant, round_),
        ]

    def read(self, t: Tenant) -> None:
        body = _ok(self.api.call("GET", f"/v1/workspaces/{t.ws}/memory", user=t.user), 200, "read")
        self.only_own(t, body["content"], "read")

    def workspace(self, t: Tenant) -> None:
        body = _ok(self.api.call("GET", f"/v1/workspaces/{t.ws}", user=t.user), 200, "workspace")
        assert (body["name"], body["ownerId"], body["role"]) == (f"ws {t.marker}", t.user, "owner")

    def save(self, t: Tenant, round_: int) -> None:
        # One save per tenant and round, on the version the round before left: never a conflict.
        body = _ok(self.api.save(t.user, t.ws, _document(t.marker, round_ + 1), round_ + 1), 200, "save")
        assert body["version"] == round_ + 2

    def recall(self, t: Tenant) -> None:
        path = f"/v1/automation/workspaces/{t.ws}/memory?purpose=recall"
        headers = admission_headers(t.admission)
        body = _ok(self.api.call("GET", path, automation=RUNTIME, headers=headers), 200, "recall")
        assert body["status"] == "ok", body["status"]
        self.only_own(t, body["block"], "recall")

    def admit(self, t: Tenant, round_: int) -> None:
        admission = _admit(self.api, t.user, t.ws, t.key_session, f"conv-{t.marker}-{round_}")
        ref = AdmissionRef.parse(admission["admissionId"])
        assert (ref.user_id, ref.workspace_id) == (t.user, t.ws), "an admission names another user"

    def entry(self, t: Tenant, round_: int) -> None:
        body = {"type": "fact", "title": f"{t.marker} fact {round_}", "summary": t.marker, "body": t.marker}
        headers = {**admission_headers(t.admission), "Idempotency-Key": f"hammer-{round_}"}
        path = f"/v1/automation/workspaces/{t.ws}/entries"
        saved = _ok(self.api.call("PUT", path, automation=RUNTIME, json=body, headers=headers), 200, "entry")
        assert saved["outcome"] == "committed", saved
        read = self.api.call("GET", f"/v1/workspaces/{t.ws}/entries/{saved['entryId']}", user=t.user)
        self.only_own(t, _ok(read, 200, "entry read")["title"], "entry read")

    def turn(self, t: Tenant, round_: int) -> None:
        conv = f"turn-{t.marker}-{round_}"
        body = {"workspaceId": t.ws, "message": "What do you know?", "idempotencyKey": conv}
        started = _ok(self.api.call("POST", f"/v1/conversations/{conv}/turns", user=t.user, json=body), 202, "turn")
        assert AdmissionRef.parse(started["admissionId"]).user_id == t.user, "a turn admitted as another user"
        self.turns[started["turnId"]] = t
        view = self.api.call("GET", f"/v1/conversations/{conv}/turns/{started['turnId']}", user=t.user)
        assert _ok(view, 200, "turn read")["turnId"] == started["turnId"]


def test_concurrent_users_never_see_each_others_identity_or_text(api: Api, worker: Settings, svc: Services) -> None:
    """Six users, each in a private workspace, read, save, recall, admit, write entries and start turns from
    24 threads at once, round after round: every well-formed request succeeds, and no answer carries
    another user's identity or text."""
    tenants = [_tenant(api) for _ in range(TENANTS)]
    hammer = Hammer(api, tenants)
    failures: list[str] = []

    def run(call: Callable[[], None]) -> None:
        try:
            call()
        except AssertionError as exc:
            failures.append(str(exc))

    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        for round_ in range(HAMMER_ROUNDS):
            calls = [call for tenant in tenants for call in hammer.calls(tenant, round_)]
            list(pool.map(run, calls))
    assert failures == []
    # Each turn ran for its own user: its answer quotes that user's memory, nobody else's.
    for turn_id, tenant in hammer.turns.items():
        view = turn_result(worker, svc.cipher, turn_id)
        assert view.status == "completed", view.status
        hammer.only_own(tenant, view.answer or "", "turn answer")


def test_concurrent_reads_and_saves_on_instances_of_one_function_each_see_their_own_request(api: Api) -> None:
    """Six reads and six Saves at once on the Memory function's environments: Powertools keeps the event being
    resolved on a class, so a Save must never be judged on a read's event (400 "body: Field required") nor a
    read answered with a Save's. Each environment is its own process, so none can be."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    path = f"/v1/workspaces/{ws}/memory"
    read = partial(api.call, "GET", path, user=owner)
    for base in range(ROUNDS // 3):  # one Save of each round wins: the next round's base
        saves = [partial(api.save, owner, ws, f"round {base} writer {n}", base) for n in range(12)]
        answers = run_together([read if n % 2 else saves[n] for n in range(12)])
        for n, answer in enumerate(answers):
            if n % 2:
                assert answer.status_code == 200, answer.text
                assert "content" in answer.json(), answer.text
            else:
                assert answer.status_code in (200, 409), answer.text
                assert ("op" if answer.status_code == 200 else "currentVersion") in answer.json(), answer.text
