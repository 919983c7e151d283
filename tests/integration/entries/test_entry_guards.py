"""Guards of the entry routes that no test held (issue 17, finding 13): each test here fails when its guard
is removed. Through the local gateway against the moto server; refused requests change nothing (scan)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scripts.localstack.local_clock import PinnedClock
from scripts.localstack.resources import LocalResources
from scripts.localstack.stack import LocalStack
from tests.integration.entries.test_agent_entry_api import (
    admitted,
    agent_save,
    agent_workspace,
    candidates,
    chain_items,
    create_entry,
    marker,
    supersede,
    workspace_items,
)
from tests.support import Api, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.clock import DAY_SECONDS, iso
from workspace_memory.kernel.terms import EntryScope, EntryType

pytestmark = pytest.mark.integration


@pytest.fixture
def clock(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    """The stack's clock standing still on a whole second (every function reads it): a test moves time past a
    retention or onto the exact moment a revision was replaced without waiting."""
    with local_stack.pinned_clock(float(int(time.time()))) as pinned:
        yield pinned


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def one_day_retention(api: Api, owner: str, ws: str) -> None:
    response = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"historyDays": 1})
    assert response.status_code == 200, response.text


def read(api: Api, user: str, ws: str, entry_id: str, query: str = "") -> Any:
    return api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}{query}", user=user)


def search(api: Api, user: str, ws: str, query: str) -> list[tuple[str, int]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/search?{query}", user=user)
    assert response.status_code == 200, response.text
    return [(r["entryId"], r["revision"]) for r in response.json()["results"]]


def listed(api: Api, user: str, ws: str, query: str = "") -> list[tuple[str, int]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/entries{query}", user=user)
    assert response.status_code == 200, response.text
    return [(r["entryId"], r["revision"]) for r in response.json()["entries"]]


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


# -- retention and asOf ---------------------------------------------------------------------------------------


def test_a_citation_of_a_document_version_past_its_retention_is_hidden(api: Api, clock: PinnedClock) -> None:
    """Version 1 is retained one day after version 2 replaced it; from that second on, a citation of it is
    `hidden` (as the version itself is gone) and the citing entry leaves the list, though DynamoDB's TTL deleter
    has not removed the item yet."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    one_day_retention(api, owner, ws)
    assert api.save(owner, ws, "# Memory\n", 0).status_code == 200
    source = {"kind": "document-version", "ref": "1", "sha256": sha("# Memory\n"), "locator": "heading"}
    citing = create_entry(api, owner, ws, marker(), sources=[source])

    def state() -> str:
        response = read(api, owner, ws, citing)
        assert response.status_code == 200, response.text
        (citation,) = response.json()["citations"]
        return str(citation["state"])

    def listed() -> tuple[list[str], int]:
        page = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()
        return [r["entryId"] for r in page["entries"]], page["hidden"]

    clock.advance(60)
    assert api.save(owner, ws, "# Memory\n- more\n", 1).status_code == 200  # version 1's day starts now
    clock.advance(DAY_SECONDS - 1)
    assert state() == "ok"
    assert listed() == ([citing], 0)
    clock.advance(1)
    assert api.call("GET", f"/v1/workspaces/{ws}/memory/versions/1", user=owner).status_code == 404
    assert state() == "hidden"
    assert listed() == ([], 1)  # the citing entry expired with the version it cites (docs/decisions/0078)


def searchable(title: str) -> dict[str, Any]:
    return {"type": "fact", "title": title, "summary": "release window", "body": "releases happen on Tuesdays"}


def revise(api: Api, owner: str, ws: str, entry_id: str, base: int, title: str) -> str:
    """Supersede `base` with a searchable revision; its `validFrom` (the moment `base` was replaced)."""
    path = f"/v1/workspaces/{ws}/entries/{entry_id}"
    response = api.call("PUT", path, user=owner, json=searchable(title), headers={"X-Base-Revision": str(base)})
    assert response.status_code == 200, response.text
    stamp: str = read(api, owner, ws, entry_id).json()["validFrom"]
    return stamp


def test_as_of_the_exact_moment_a_revision_was_replaced_answers_the_newer_one(api: Api, clock: PinnedClock) -> None:
    """Three revisions, so that the moment names neither the head nor the first: revision 1 is valid until
    (not at) the moment revision 2 replaced it, in the read, the list and the search."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    created = api.call(
        "POST", f"/v1/workspaces/{ws}/entries", user=owner, json={"scope": "workspace", **searchable("one")}
    )
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    clock.advance(60)
    replaced = revise(api, owner, ws, entry_id, 1, "two")
    clock.advance(60)
    revise(api, owner, ws, entry_id, 2, "three")
    assert replaced == iso(clock.now() - 60)

    at = read(api, owner, ws, entry_id, f"?asOf={replaced}")
    assert at.status_code == 200, at.text
    assert (at.json()["revision"], at.json()["title"]) == (2, "two")
    just_before = iso(clock.now() - 60 - 0.001)
    assert read(api, owner, ws, entry_id, f"?asOf={just_before}").json()["revision"] == 1
    assert listed(api, owner, ws, f"?asOf={replaced}") == [(entry_id, 2)]
    assert search(api, owner, ws, f"q=release+window&asOf={replaced}") == [(entry_id, 2)]


def test_as_of_never_answers_a_revision_past_its_retention(api: Api, clock: PinnedClock) -> None:
    """Revision 1 is kept one day after revision 2 replaced it. Before that, `asOf` within its validity reads
    and finds it; from that second on, neither the read, the list nor the search answers it, though its item
    is still in the table (TTL deletes late) and the search index was built while it was retained."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    one_day_retention(api, owner, ws)
    created = api.call(
        "POST", f"/v1/workspaces/{ws}/entries", user=owner, json={"scope": "workspace", **searchable("one")}
    )
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    then = iso(clock.now() + 30)
    clock.advance(60)
    revise(api, owner, ws, entry_id, 1, "two")
    assert read(api, owner, ws, entry_id, f"?asOf={then}").json()["revision"] == 1
    assert listed(api, owner, ws, f"?asOf={then}") == [(entry_id, 1)]
    assert search(api, owner, ws, f"q=release+window&asOf={then}") == [(entry_id, 1)]

    clock.advance(DAY_SECONDS)
    # Another entry: the next search rebuilds the index from the table (a write moves `entriesRevision`).
    other = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json={"scope": "workspace", **searchable("x")})
    assert other.status_code == 201, other.text

    gone = read(api, owner, ws, entry_id, f"?asOf={then}")
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "ENTRY_NOT_FOUND")
    assert listed(api, owner, ws, f"?asOf={then}") == []
    assert search(api, owner, ws, f"q=release+window&asOf={then}") == []
    assert read(api, owner, ws, entry_id).json()["revision"] == 2  # the head never expires


# -- candidates ----------------------------------------------------------------------------------------------


def decide_at(api: Api, user: str, ws: str, candidate_id: str, verb: str, revision: int) -> Any:
    path = f"/v1/workspaces/{ws}/candidates/{candidate_id}/{verb}"
    return api.call("POST", path, user=user, json={"revision": revision})


def test_a_decided_candidate_cannot_be_decided_again_at_its_new_revision(
    api: Api, svc: Services, resources: LocalResources
) -> None:
    """A decision moves the candidate to revision 2; a second decision naming revision 2 is stale (the
    candidate is no longer pending), whichever way either went, and writes nothing."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    draft = Draft(EntryType.FACT, EntryText("Proposed", "by the agent", "body"))
    accepted, rejected = svc.entries.propose(owner, ws, draft), svc.entries.propose(owner, ws, draft)
    first = decide_at(api, owner, ws, accepted, "accept", 1)
    assert first.status_code == 200, first.text
    assert decide_at(api, owner, ws, rejected, "reject", 1).status_code == 204
    before = workspace_items(resources, ws)

    for candidate_id in (accepted, rejected):
        for verb in ("accept", "reject"):
            again = decide_at(api, owner, ws, candidate_id, verb, 2)
            assert (again.status_code, again.json()["error"]["code"]) == (409, "STALE_REVISION"), again.text
            assert again.json()["currentRevision"] == 2

    assert workspace_items(resources, ws) == before
    assert listed(api, owner, ws) == [(first.json()["entryId"], 1)]


def test_another_members_private_candidate_is_neither_listed_nor_decidable(
    api: Api, svc: Services, resources: LocalResources
) -> None:
    """A member-scope candidate is its member's alone: the owner (who decides every other candidate) does not
    see it and cannot accept or reject it (404, as a missing one); its member can."""
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    draft = Draft(EntryType.FACT, EntryText("Mine", "private", "body"), EntryScope.MEMBER)
    private = svc.entries.propose(editor, ws, draft)
    before = workspace_items(resources, ws)

    assert candidates(api, owner, ws) == []
    missing = decide_at(api, owner, ws, "ec_" + "0" * 24, "accept", 1)
    for verb in ("accept", "reject"):
        refused = decide_at(api, owner, ws, private, verb, 1)
        assert (refused.status_code, refused.json()["error"]["code"]) == (404, "CANDIDATE_NOT_FOUND"), refused.text
        assert refused.json() == missing.json()
    assert workspace_items(resources, ws) == before

    assert [c["candidateId"] for c in candidates(api, editor, ws)] == [private]
    accepted = decide_at(api, editor, ws, private, "accept", 1)
    assert accepted.status_code == 200, accepted.text
    assert read(api, editor, ws, accepted.json()["entryId"]).json()["scope"] == "member"


# -- redaction -----------------------------------------------------------------------------------------------


def test_an_agents_summary_body_and_source_locators_are_stored_redacted(api: Api) -> None:
    owner, ws = agent_workspace(api, "auto")
    cited = create_entry(api, owner, ws, marker())
    source = {"kind": "entry", "ref": cited, "sha256": sha(read(api, owner, ws, cited).json()["body"])}
    source["locator"] = "line from ops-lead@example.com"
    saved = agent_save(
        api,
        ws,
        admitted(api, ws, owner),
        "save-1",
        summary="ask ann@example.com",
        body="or bob@example.org",
        sources=[source],
    )
    assert saved.status_code == 200, saved.text
    # The summary's and the body's (a locator's findings are not counted in the answer).
    assert {r["kind"] for r in saved.json()["redactions"]} == {"email"}
    assert sum(r["count"] for r in saved.json()["redactions"]) == 2

    stored = read(api, owner, ws, saved.json()["entryId"]).json()
    assert (stored["summary"], stored["body"]) == ("ask [redacted:email]", "or [redacted:email]")
    assert [c["locator"] for c in stored["citations"]] == ["line from [redacted:email]"]
    assert [c["state"] for c in stored["citations"]] == ["ok"]
