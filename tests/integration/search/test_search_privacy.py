"""Attack (issue 17, finding 2): BM25's IDF, document count and average length were computed over every
revision of the workspace, other members' private entries included, so the scores and order of a member's
own results told whether those private entries hold a word. Every score a caller sees is now a function of
what that caller may see: the same entries give the same scores whatever is hidden beside them."""

from __future__ import annotations

import pytest

from tests.integration.search.test_search_routes import create, entry, search
from tests.support import Api, new_user

pytestmark = pytest.mark.integration

QUERY = "q=xylophone%20yodel&k=10"


def scores_by_title(api: Api, user: str, ws: str) -> dict[str, float]:
    found = search(api, user, ws, QUERY)
    assert found.status_code == 200, found.text
    return {hit["title"]: hit["score"] for hit in found.json()["results"]}


def workspace_with_alices_entries(api: Api, alice: str, bob: str) -> str:
    ws = api.workspace(alice)
    api.add_member(alice, ws, bob, "editor")
    create(api, alice, ws, entry("Xylophone practice", "xylophone"))
    create(api, alice, ws, entry("Yodel lessons", "yodel on the long mountain trail every weekend in summer"))
    return ws


def test_another_members_private_entries_move_no_score_of_mine(api: Api) -> None:
    alice, bob = new_user("alice"), new_user("bob")
    quiet = workspace_with_alices_entries(api, alice, bob)
    crowded = workspace_with_alices_entries(api, alice, bob)
    for n in range(20):  # bob's private entries, all about the word under test
        create(api, bob, crowded, entry(f"Private {n}", "xylophone xylophone", scope="member"))

    assert scores_by_title(api, alice, crowded) == scores_by_title(api, alice, quiet)
    assert set(scores_by_title(api, alice, crowded)) == {"Xylophone practice", "Yodel lessons"}
