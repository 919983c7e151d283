"""Consolidation on the real stack (docs/decisions/0086): a run over a seeded workspace proposes exactly the
planted duplicate and contradiction, with their evidence, and nothing about unrelated entries or across a
member's private one; accepting retires the older chain (superseded, history intact), rejecting changes nothing,
and a later run proposes nothing twice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.consolidation.consolidation_support import Scene, candidates, consolidated, memory, seeded
from tests.support import Api
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def scene(api: Api) -> Scene:
    return seeded(api)


def _by_kind(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["kind"]: c for c in found}


def test_a_run_proposes_exactly_the_planted_duplicate_and_contradiction_with_their_evidence(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    before = memory(svc, scene.ws)
    assert len([i for i in before if str(i["sk"]).startswith("ENTRY#")]) == len(scene.ids)  # the scan sees them
    done = consolidated(settings, svc, scene.ws)
    assert (done.judged, done.proposed, done.already_proposed) == (2, 2, 0)
    assert memory(svc, scene.ws) == before  # a run writes no entry: it proposes
    found = _by_kind(candidates(api, scene.owner, scene.ws))
    assert set(found) == {"merge", "supersede"}
    ids = scene.ids
    merge, supersede = found["merge"], found["supersede"]
    assert (merge["entryId"], merge["baseRevision"], merge["title"]) == (ids["dup_old"], 1, "Deploy window")
    assert merge["evidence"] == {
        "keeperId": ids["dup_new"],
        "keeperRevision": 1,
        "rule": "duplicate-newer-kept",
        "runId": merge["evidence"]["runId"],
    }
    assert (supersede["entryId"], supersede["summary"]) == (
        ids["claim_old"],
        "We use Postgres 15 for the main database",
    )
    assert supersede["evidence"]["keeperId"] == ids["claim_new"]
    assert supersede["evidence"]["rule"] == "conflict-newer-wins"
    assert merge["proposedBy"] == "consolidation"
    runs = api.call("GET", f"/v1/workspaces/{scene.ws}/consolidation/runs", user=scene.owner)
    assert runs.status_code == 200, runs.text
    (record,) = runs.json()["runs"]
    assert (record["runId"], record["status"], record["trigger"]) == (merge["evidence"]["runId"], "done", "owner")
    assert record["counts"] == {"pairs": 2, "judged": 2, "proposed": 2, "alreadyProposed": 0, "stale": 0, "left": 0}


def test_a_second_run_proposes_nothing_and_asks_the_model_nothing(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    listed = candidates(api, scene.owner, scene.ws)
    done = consolidated(settings, svc, scene.ws)
    assert (done.judged, done.proposed) == (0, 0)
    assert candidates(api, scene.owner, scene.ws) == listed


def test_only_the_owner_sees_the_runs(api: Api, scene: Scene) -> None:
    refused = api.call("GET", f"/v1/workspaces/{scene.ws}/consolidation/runs", user=scene.editor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")


def test_rejecting_changes_nothing_and_accepting_retires_the_older_chain_with_its_history(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    found = _by_kind(candidates(api, scene.owner, scene.ws))
    ws, ids = scene.ws, scene.ids
    before = memory(svc, ws)
    supersede, merge = found["supersede"], found["merge"]
    rejected = api.call(
        "POST",
        f"/v1/workspaces/{ws}/candidates/{supersede['candidateId']}/reject",
        user=scene.owner,
        json={"revision": supersede["revision"]},
    )
    assert rejected.status_code == 204, rejected.text
    assert memory(svc, ws) == before
    accepted = api.call(
        "POST",
        f"/v1/workspaces/{ws}/candidates/{merge['candidateId']}/accept",
        user=scene.owner,
        json={"revision": merge["revision"]},
    )
    assert accepted.status_code == 200, accepted.text
    retired = api.call("GET", f"/v1/workspaces/{ws}/entries/{ids['dup_old']}", user=scene.owner).json()
    assert (retired["status"], retired["supersededByEntry"], retired["summary"]) == (
        "superseded",
        ids["dup_new"],
        "Deploys happen on Tuesday",
    )
    assert retired["validTo"] is not None
    listed = api.call("GET", f"/v1/workspaces/{ws}/entries", user=scene.owner).json()["entries"]
    assert ids["dup_old"] not in {e["entryId"] for e in listed}
    assert ids["dup_new"] in {e["entryId"] for e in listed}
    history = api.call("GET", f"/v1/workspaces/{ws}/entries/{ids['dup_old']}/history", user=scene.owner)
    assert history.status_code == 200, history.text
    assert [(r["summary"], r["status"]) for r in history.json()["entries"]] == [
        ("Deploys happen on Tuesday", "superseded")
    ]
    searched = api.call("GET", f"/v1/workspaces/{ws}/search?q=deploy+window", user=scene.owner)
    assert searched.status_code == 200, searched.text
    assert ids["dup_old"] not in {r["entryId"] for r in searched.json()["results"]}
    again = api.call(
        "POST",
        f"/v1/workspaces/{ws}/candidates/{merge['candidateId']}/accept",
        user=scene.owner,
        json={"revision": merge["revision"]},
    )
    assert again.status_code == 409
    done = consolidated(settings, svc, ws)  # the rejected pair stays decided, the retired chain is history
    assert (done.judged, done.proposed) == (0, 0)


def test_the_audit_trail_names_the_service_as_proposer_and_the_person_as_decider(api: Api, scene: Scene) -> None:
    listed = api.call("GET", f"/v1/workspaces/{scene.ws}/audit?limit=100&kind=candidate", user=scene.owner)
    assert listed.status_code == 200, listed.text
    told = sorted((e["op"], e["actor"], e["actorKind"]) for e in listed.json()["events"])
    assert told == [
        ("accepted", scene.owner, "person"),
        ("proposed", "consolidation", "service"),
        ("proposed", "consolidation", "service"),
        ("rejected", scene.owner, "person"),
    ]
    accepted = next(e for e in listed.json()["events"] if e["op"] == "accepted")
    assert {(t["kind"], t["id"]) for t in accepted["targets"]} >= {("entry", scene.ids["dup_old"])}
