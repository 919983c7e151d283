"""A forget blocks what the chain drew on, over HTTP on the local stack (decisions/0074): an agent's save citing
a source of a forgotten chain, or coming from the turn that wrote it, is 409 `SOURCE_FORGOTTEN` in either mode
with no item changed (a scan of the workspace's items before and after) and no answer recorded to replay; a
person's save is not blocked; an accepted forget proposal blocks as DELETE does; and the chain's pending
candidates are decided with their sealed text gone, while the inbox still lists the rest."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import (
    admitted,
    agent_save,
    agent_workspace,
    candidates,
    decide,
    propose_forget,
    workspace_items,
)
from tests.integration.entries.test_entries import create, entry
from tests.support import RUNTIME, Api, admission_headers

pytestmark = pytest.mark.integration

SHA = "0" * 64
CITED = [{"kind": "document-version", "ref": "3", "sha256": SHA, "locator": "line 2"}]
ELSEWHERE = [{"kind": "document-version", "ref": "4", "sha256": SHA}]


def code(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json().get("error", {}).get("code", "")


def forget(api: Api, user: str, ws: str, entry_id: str) -> None:
    response = api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=user)
    assert response.status_code == 204, response.text


def item(resources: LocalResources, ws: str, sk: str) -> dict[str, Any]:
    (found,) = [i for i in workspace_items(resources, ws) if i["sk"]["S"] == sk]
    return found


@pytest.mark.parametrize("mode", ["auto", "read_only"])
def test_an_agent_save_citing_a_forgotten_source_is_refused_and_changes_nothing(
    api: Api, resources: LocalResources, mode: str
) -> None:
    owner, ws = agent_workspace(api, mode)
    forget(api, owner, ws, create(api, owner, ws, entry(sources=CITED)))
    admission = admitted(api, ws, owner)
    before = workspace_items(resources, ws)
    refused = agent_save(api, ws, admission, "save-1", sources=CITED)
    assert code(refused) == (409, "SOURCE_FORGOTTEN")
    assert code(agent_save(api, ws, admission, "save-1", sources=CITED)) == (409, "SOURCE_FORGOTTEN")  # no replay
    assert workspace_items(resources, ws) == before
    elsewhere = agent_save(api, ws, admission, "save-2", sources=ELSEWHERE)
    assert elsewhere.status_code == 200, elsewhere.text
    assert elsewhere.json()["outcome"] == ("committed" if mode == "auto" else "proposal")


def test_a_persons_save_citing_a_forgotten_source_is_not_blocked(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    forget(api, owner, ws, create(api, owner, ws, entry(sources=CITED)))
    blocks = [i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith("ENTRYBLOCK#")]
    assert len(blocks) == 1
    assert len(blocks[0]["sk"]["S"].removeprefix("ENTRYBLOCK#")) == 64
    assert set(blocks[0]) == {"pk", "sk", "entryId", "blockedAt", "ttl"}
    assert create(api, owner, ws, entry(sources=CITED))


def test_an_accepted_forget_proposal_blocks_the_source_and_the_turn(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    turn = admitted(api, ws, owner)
    saved = agent_save(api, ws, turn, "save-1", sources=CITED)
    assert saved.status_code == 200, saved.text
    entry_id = saved.json()["entryId"]
    proposal = propose_forget(api, ws, turn, entry_id).json()["candidateId"]
    assert decide(api, owner, ws, proposal, "accept").status_code == 200
    tombstone = item(resources, ws, f"ENTRY#{entry_id}")
    assert tombstone["blockedSources"] == {"N": "2"}  # the source and the turn
    later = admitted(api, ws, owner)
    before = workspace_items(resources, ws)
    assert code(agent_save(api, ws, later, "save-2", sources=CITED)) == (409, "SOURCE_FORGOTTEN")
    assert code(agent_save(api, ws, turn, "save-3", title="Other")) == (409, "SOURCE_FORGOTTEN")
    assert workspace_items(resources, ws) == before


def test_pending_candidates_of_a_forgotten_chain_lose_their_text(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "read_only")
    entry_id = create(api, owner, ws, entry(key="ops/deploy-day"))
    admission = admitted(api, ws, owner)
    body = {"type": "fact", "title": "Deploys", "summary": "Tuesdays", "key": "ops/deploy-day"}
    headers = {**admission_headers(admission), "Idempotency-Key": "save-1"}
    over = api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)
    other = agent_save(api, ws, admission, "save-2", title="Elsewhere", sources=ELSEWHERE)
    assert (over.status_code, other.status_code) == (200, 200)
    forget_proposal = propose_forget(api, ws, admission, entry_id, key="forget-1").json()["candidateId"]
    forget(api, owner, ws, entry_id)
    for candidate_id in (over.json()["candidateId"], forget_proposal):
        stored = item(resources, ws, f"ENTRYCAND#{candidate_id}")
        assert "ciphertext" not in stored
        assert (stored["status"], stored["rejectedFor"]) == ({"S": "rejected"}, {"S": "entry-forgotten"})
        assert code(decide(api, owner, ws, candidate_id, "accept")) == (409, "STALE_REVISION")
    # the inbox still answers, with the candidate of another chain only
    assert [c["candidateId"] for c in candidates(api, owner, ws)] == [other.json()["candidateId"]]
    assert "ciphertext" in item(resources, ws, f"ENTRYCAND#{other.json()['candidateId']}")
