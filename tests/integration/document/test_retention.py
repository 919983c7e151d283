"""Retention (docs/architecture.md#retention, issue 9 item 4), on the moto server: a version expires `historyDays` after
it stopped being the head, changing the retention rewrites the expiry of the versions already superseded, an expired
version is gone for every read, and compare-and-set stays whole once the versions in between have expired.

Time is an injected manual clock. DynamoDB's TTL deleter (which removes due items within about two days) is
simulated by `run_ttl_deleter`, which deletes the workspace's items whose `ttl` is due."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entry_support import draft
from tests.integration.fence_support import Scene, make_scene
from tests.support import Api, new_user
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds
from workspace_memory.kernel.errors import StaleBaseVersion, VersionNotFound
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.turns.capture import Outcome
from workspace_memory.workspaces.access import ShareType

pytestmark = pytest.mark.integration


def workspace_items(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    """Every stored item of the workspace's partition but its audit events (each retention PUT writes one:
    tests/integration/governance/test_audit.py checks them), in wire form (what a byte-level comparison
    needs)."""
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {
        "TableName": resources.table_name,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": keys.ws(ws)}},
        "ConsistentRead": True,
    }
    while True:
        page = client.query(**kwargs)
        items.extend(i for i in page["Items"] if not i["sk"]["S"].startswith(keys.AUDIT_PREFIX))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def run_ttl_deleter(resources: LocalResources, ws: str, now: float) -> list[str]:
    """What DynamoDB's TTL process does, some time after an item's `ttl` has passed: delete it. Limited to the
    workspace's partition (other tests' items run on other clocks). Returns the deleted sort keys."""
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    deleted = []
    for item in workspace_items(resources, ws):
        if "ttl" in item and int(item["ttl"]["N"]) <= now:
            client.delete_item(TableName=resources.table_name, Key={"pk": item["pk"], "sk": item["sk"]})
            deleted.append(item["sk"]["S"])
    return sorted(deleted)


def version_item(svc: Services, ws: str, number: int) -> dict[str, Any]:
    item = svc.table.get(*keys.version(ws, number))
    assert item is not None
    return item


def expected_ttl(svc: Services, ws: str, number: int, days: int) -> int:
    """`historyDays` after the next version was made."""
    return epoch_seconds(version_item(svc, ws, number + 1)["createdAt"]) + days * DAY_SECONDS


def four_versions(settings: Settings, days_apart: float = 3600) -> Scene:
    """A workspace in `auto` with versions 1..4, each made `days_apart` seconds after the one before."""
    scene = make_scene(settings)
    for base in (1, 2, 3):
        scene.clock.advance(days_apart)
        scene.svc.document.save(scene.owner, scene.ws, f"# Memory\n- fact {base + 1}\n", base)
    assert scene.head()[0] == 4
    return scene


def test_every_kind_of_write_starts_the_retention_clock_of_the_version_it_supersedes(settings: Settings) -> None:
    scene = make_scene(settings)  # version 1, by Save
    svc, ws, owner = scene.svc, scene.ws, scene.owner
    scene.clock.advance(60)
    svc.document.save(owner, ws, "# Memory\n- two\n", 1)  # supersedes 1 under the default, 90 days
    assert version_item(svc, ws, 1)["ttl"] == expected_ttl(svc, ws, 1, 90)
    assert svc.retention.set(owner, ws, 7) == 7
    scene.clock.advance(60)
    svc.document.clear(owner, ws, 2)
    scene.clock.advance(60)
    svc.document.undo(owner, ws, 2, 3)
    scene.clock.advance(60)
    admitted = scene.admit()
    assert scene.capture(admitted, "- captured", 4).outcome is Outcome.COMMITTED
    scene.set_mode(Mode.READ_ONLY)
    proposal = scene.capture(scene.admit(), "- proposed", 5).proposal
    assert proposal is not None
    scene.clock.advance(60)
    svc.capture.apply_proposal(owner, ws, proposal.edits, proposal.clear_generation, 5)

    for number in (1, 2, 3, 4, 5):  # 1 rewritten; the rest superseded by clear, undo, capture, apply-proposal
        item = version_item(svc, ws, number)
        assert item["supersededAt"] == version_item(svc, ws, number + 1)["createdAt"]
        assert item["ttl"] == expected_ttl(svc, ws, number, 7)
    assert "ttl" not in version_item(svc, ws, 6)  # the head's version never expires
    assert "supersededAt" not in version_item(svc, ws, 6)


def test_setting_the_retention_rewrites_the_expiry_of_versions_already_superseded(
    settings: Settings, resources: LocalResources
) -> None:
    scene = four_versions(settings, days_apart=DAY_SECONDS)
    svc, ws, owner = scene.svc, scene.ws, scene.owner
    for number in (1, 2, 3):
        assert version_item(svc, ws, number)["ttl"] == expected_ttl(svc, ws, number, 90)

    assert svc.retention.set(owner, ws, 30) == 30
    assert svc.retention.get(owner, ws) == 30
    for number in (1, 2, 3):
        assert version_item(svc, ws, number)["ttl"] == expected_ttl(svc, ws, number, 30)
    assert "ttl" not in version_item(svc, ws, 4)
    before = workspace_items(resources, ws)
    svc.retention.set(owner, ws, 30)  # idempotent: nothing to rewrite
    assert workspace_items(resources, ws) == before

    # Shortened to one day, versions 1 and 2 (superseded two and three days ago) are gone at once.
    svc.retention.set(owner, ws, 1)
    page = svc.document.history(owner, ws, 10, None)
    assert [v.version for v in page.versions] == [4, 3]
    for number in (1, 2):
        with pytest.raises(VersionNotFound):
            svc.document.read_version(owner, ws, number)
        with pytest.raises(VersionNotFound):
            svc.document.undo(owner, ws, number, 4)
    assert svc.document.read_version(owner, ws, 3)[1] == "# Memory\n- fact 3\n"
    # An expired version is not brought back by a longer retention: it is gone for good.
    svc.retention.set(owner, ws, 365)
    assert [v.version for v in svc.document.history(owner, ws, 10, None).versions] == [4, 3]
    assert run_ttl_deleter(resources, ws, scene.clock.now()) == [keys.version(ws, 1)[1], keys.version(ws, 2)[1]]


def test_a_write_on_a_stale_base_is_refused_after_the_versions_in_between_expired(
    settings: Settings, resources: LocalResources
) -> None:
    scene = four_versions(settings)
    svc, ws, owner = scene.svc, scene.ws, scene.owner
    svc.retention.set(owner, ws, 1)
    scene.clock.advance(2 * DAY_SECONDS)
    gone = run_ttl_deleter(resources, ws, scene.clock.now())
    assert gone == [keys.version(ws, n)[1] for n in (1, 2, 3)]  # versions 2 and 3 no longer exist to collide with
    admitted = scene.admit()  # admitted now, so only the base can be wrong
    before = workspace_items(resources, ws)

    for base in (1, 2, 3):
        with pytest.raises(StaleBaseVersion) as refused:
            svc.document.save(owner, ws, "lost update", base)
        assert refused.value.details == {"current_version": 4}
        with pytest.raises(StaleBaseVersion):
            svc.document.clear(owner, ws, base)
        with pytest.raises(StaleBaseVersion):
            svc.document.undo(owner, ws, 4, base)
        with pytest.raises(StaleBaseVersion):
            svc.capture.apply_proposal(owner, ws, [{"op": "add", "line": "- late"}], 0, base)
        assert scene.capture(admitted, "- late", base).outcome is Outcome.CONFLICT
    assert workspace_items(resources, ws) == before
    assert scene.head() == (4, "# Memory\n- fact 4\n")


def test_a_warm_save_is_one_dynamodb_call(settings: Settings) -> None:
    """A cold process reads the retention once; a warm Save is one TransactWriteItems and nothing else, even
    with the retention check; a retention changed elsewhere costs the stale process one read and one retry."""
    svc = build_services(settings)
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "warm", ShareType.SHARED)
    calls: list[str] = []
    svc.clients.dynamodb.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))

    svc.document.save(owner, ws, "one", 0)
    assert calls == ["GetItem", "TransactWriteItems"]  # cold: the retention, then the write
    for base in (1, 2, 3):
        calls.clear()
        svc.document.save(owner, ws, f"warm {base}", base)
        assert calls == ["TransactWriteItems"]

    other = build_services(settings, clients=svc.clients)  # another process changes the retention
    other.retention.set(owner, ws, 5)
    calls.clear()
    svc.document.save(owner, ws, "after the change", 4)
    assert calls == ["TransactWriteItems", "GetItem", "TransactWriteItems"]
    assert version_item(svc, ws, 4)["ttl"] == expected_ttl(svc, ws, 4, 5)
    calls.clear()
    svc.document.save(owner, ws, "warm again", 5)
    assert calls == ["TransactWriteItems"]


BAD_RETENTION = [
    ("zero", {"historyDays": 0}),
    ("over a year", {"historyDays": 366}),
    ("negative", {"historyDays": -1}),
    ("not a number", {"historyDays": "ninety"}),
    ("missing", {}),
    ("unknown field", {"historyDays": 30, "days": 30}),
    ("agent window zero", {"agentDays": 0}),
    ("agent window over a year", {"agentDays": 366}),
    ("agent window not a number", {"agentDays": "ninety"}),
    ("a good history, a bad agent window", {"historyDays": 30, "agentDays": 400}),
    ("both null", {"historyDays": None, "agentDays": None}),
]


@pytest.mark.parametrize(("case", "body"), BAD_RETENTION, ids=[c for c, _ in BAD_RETENTION])
def test_a_retention_outside_1_to_365_is_refused_and_changes_nothing(
    api: Api, resources: LocalResources, case: str, body: dict[str, Any]
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "one", 0).status_code == 200
    assert api.save(owner, ws, "two", 1).status_code == 200
    before = workspace_items(resources, ws)
    response = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "INVALID_REQUEST"), case
    assert workspace_items(resources, ws) == before


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [("viewer", 403, "FORBIDDEN"), ("editor", 403, "FORBIDDEN"), ("stranger", 404, "WORKSPACE_NOT_FOUND")],
)
def test_only_the_owner_sets_the_retention(
    api: Api, resources: LocalResources, who: str, status: int, code: str
) -> None:
    owner, user = new_user("owner"), new_user(who)
    ws = api.workspace(owner)
    if who != "stranger":
        api.add_member(owner, ws, user, who)
    assert api.save(owner, ws, "one", 0).status_code == 200
    assert api.save(owner, ws, "two", 1).status_code == 200
    before = workspace_items(resources, ws)
    response = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=user, json={"historyDays": 1})
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert workspace_items(resources, ws) == before
    read = api.call("GET", f"/v1/workspaces/{ws}/retention", user=user)
    if who == "stranger":
        assert (read.status_code, read.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    else:
        assert (read.status_code, read.json()) == (200, {"historyDays": 90, "agentDays": 90})


def test_the_owner_sets_and_reads_the_retention_over_http(api: Api, svc: Services) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("GET", f"/v1/workspaces/{ws}/retention", user=owner).json() == {"historyDays": 90, "agentDays": 90}
    assert api.save(owner, ws, "one", 0).status_code == 200
    assert api.save(owner, ws, "two", 1).status_code == 200
    response = api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"historyDays": 365})
    windows = {"historyDays": 365, "agentDays": 90}  # the agent window left out keeps its value
    assert (response.status_code, response.json()) == (200, windows)
    assert api.call("GET", f"/v1/workspaces/{ws}/retention", user=owner).json() == windows
    assert version_item(svc, ws, 1)["ttl"] == expected_ttl(svc, ws, 1, 365)


# -- superseded entry revisions follow the workspace's retention (docs/architecture.md#retention) ----------------------


def entry_revision_item(svc: Services, ws: str, entry_id: str, revision: int) -> dict[str, Any] | None:
    return svc.table.get(*keys.entry_revision(ws, entry_id, revision))


def test_a_retention_change_rewrites_the_expiry_of_superseded_entry_revisions(
    settings: Settings, resources: LocalResources
) -> None:
    scene = make_scene(settings)
    svc, ws, owner = scene.svc, scene.ws, scene.owner

    entry_id = svc.entries.create(owner, ws, draft("Deploys 1", body="revision 1")).entry_id
    for base in (1, 2):
        scene.clock.advance(3600)
        svc.entries.supersede(owner, ws, entry_id, draft(f"Deploys {base + 1}", body=f"revision {base + 1}"), base)

    def ttl(revision: int) -> int | None:
        item = entry_revision_item(svc, ws, entry_id, revision)
        assert item is not None
        return None if "ttl" not in item else int(item["ttl"])

    def due(revision: int, days: int) -> int:
        item = entry_revision_item(svc, ws, entry_id, revision)
        assert item is not None
        return epoch_seconds(item["supersededAt"]) + days * DAY_SECONDS

    assert (ttl(1), ttl(2), ttl(3)) == (due(1, 90), due(2, 90), None)  # the head's revision never expires

    svc.retention.set(owner, ws, 30)
    assert (ttl(1), ttl(2), ttl(3)) == (due(1, 30), due(2, 30), None)

    # 1 day: revision 1 (superseded 2 h ago) expires in a day; past it, a longer retention does not revive it.
    svc.retention.set(owner, ws, 1)
    scene.clock.advance(DAY_SECONDS - 3600 + 1)  # revision 1 is past its day, revision 2 an hour short of it
    before = workspace_items(resources, ws)
    svc.retention.set(owner, ws, 365)
    assert (ttl(1), ttl(2), ttl(3)) == (due(1, 1), due(2, 365), None)
    changed = [a for a, b in zip(before, workspace_items(resources, ws), strict=True) if a != b]
    # ENTRIES: the retention change moves `entriesRevision` on, so search rebuilds (decision 0056)
    assert sorted(i["sk"]["S"] for i in changed) == sorted(["META", "ENTRIES", keys.entry_revision(ws, entry_id, 2)[1]])
    assert [r.revision for r in svc.entries.history(owner, ws, entry_id, 10, None).rows] == [3, 2]
