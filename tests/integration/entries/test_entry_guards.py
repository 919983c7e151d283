"""Guards of the entry routes that no test held (issue 17, finding 13): each test here fails when its guard
is removed. Through the local gateway against the moto server; refused requests change nothing (scan)."""

from __future__ import annotations

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import chain_items, create_entry, marker, supersede, workspace_items
from tests.support import Api, new_user

pytestmark = pytest.mark.integration


def test_the_history_of_a_forgotten_chain_is_gone_not_empty(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    entry_id = create_entry(api, owner, ws, marker())
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).status_code == 204
    history = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}/history", user=owner)
    assert (history.status_code, history.json()["error"]["code"]) == (410, "ENTRY_FORGOTTEN")


def test_only_the_owner_may_forget_a_members_entries_even_when_there_are_none(
    api: Api, resources: LocalResources
) -> None:
    owner, editor, member = new_user("owner"), new_user("editor"), new_user("member")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    api.add_member(owner, ws, member, "editor")
    before = workspace_items(resources, ws)
    refused = api.call("DELETE", f"/v1/workspaces/{ws}/members/{member}/entries", user=editor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")
    assert workspace_items(resources, ws) == before


def test_forgetting_a_chain_longer_than_one_batch_leaves_no_revision(api: Api, resources: LocalResources) -> None:
    """The first transaction deletes 90 revisions; the rest go in later batches."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    entry_id = create_entry(api, owner, ws, marker())
    for base in range(1, 96):
        supersede(api, owner, ws, entry_id, base, marker())
    revisions = [i for i in chain_items(resources, ws, entry_id) if i["sk"]["S"].startswith("ENTRYREV#")]
    assert len(revisions) == 96
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).status_code == 204
    (tombstone,) = chain_items(resources, ws, entry_id)
    assert tombstone["status"]["S"] == "forgotten"
