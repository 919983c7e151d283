"""The local gateway runs one request at a time per handler instance, as a Lambda execution environment does:
concurrent requests to two routes of one function each get their own route's answer (a browser page sends
them in parallel as a matter of course)."""

from __future__ import annotations

from functools import partial

import pytest

from tests.integration.test_races import run_together
from tests.support import Api, new_user

pytestmark = pytest.mark.integration

ROUNDS = 30


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
        assert (listed.json(), pending.json()) == (
            {"entries": [], "nextCursor": None},
            {"candidates": [], "nextCursor": None},
        )


def test_concurrent_reads_and_saves_on_instances_of_one_function_each_see_their_own_request(api: Api) -> None:
    """Six reads and six Saves at once: the Memory function runs them on several instances in one process, and
    Powertools keeps the event being resolved once per process; a Save must never be judged on a read's event
    (400 "body: Field required") nor a read answered with a Save's (scripts/localstack/powertools_threads.py)."""
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
