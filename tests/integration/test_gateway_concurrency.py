"""The local gateway runs one request at a time per handler instance, as a Lambda execution environment does:
concurrent requests to two routes of one function each get their own route's answer (a browser page sends
them in parallel as a matter of course)."""

from __future__ import annotations

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
