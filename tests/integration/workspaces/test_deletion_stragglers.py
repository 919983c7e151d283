"""Writes that race a workspace's deletion (issue 17 finding 10c, docs/decisions/0056), on the moto server: a
write judged before the tombstone whose request is sent after the tombstone and the whole purge (META
included) leaves no item of the workspace behind. The race is forced, not hoped for: a hook on the writer's
DynamoDB client runs the tombstone and the purge, through services of their own, just before the write's
request leaves. Recall's receipt, an agent save, a working-notes write and a key session's
opening and revocation are the writes that used to land unconditioned."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.fence_support import Scene, make_scene
from tests.support import scan_all
from workspace_memory.adapters.aws import build_clients
from workspace_memory.bootstrap import build_services
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.clock import iso
from workspace_memory.kernel.errors import WorkspaceNotFound
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryType
from workspace_memory.store.changes import MemberIsOwner, TombstoneHead, TombstoneWorkspace
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.recall import RecallStatus

pytestmark = pytest.mark.integration


def _deleted_before(scene: Scene, settings: Settings, sends: Callable[[str], bool]) -> list[bool]:
    """Just before the scene's client sends the first request whose parameters `sends` picks, the workspace
    is tombstoned and purged to the end (META last), by services with clients of their own. Returns a list
    that gains an element when that happened."""
    other = build_services(settings, clients=build_clients(settings))
    fired: list[bool] = []

    def hook(params: Any, **_: Any) -> None:
        if fired or not sends(str(params)):
            return
        fired.append(True)
        at = iso(scene.clock.now())
        other.table.transact(
            [
                TombstoneWorkspace(scene.ws, scene.owner, at),
                TombstoneHead(scene.ws),
                MemberIsOwner(scene.ws, scene.owner),
            ]
        )
        while other.workspace_purge.purge_batch(scene.ws, 100).more:
            pass

    scene.svc.clients.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.*", hook, unique_id=f"straggler-{uuid.uuid4().hex}"
    )
    return fired


def naming(resources: LocalResources, ws: str, conversation: str | None = None) -> list[str]:
    """The items that still belong to the workspace: its partition, anything naming it, the conversation's."""
    left = []
    for item in scan_all(resources):
        pk = item["pk"]["S"]
        if pk == f"WS#{ws}" or item.get("workspaceId", {}).get("S") == ws or pk == f"CONV#{conversation}":
            left.append(f"{pk} {item['sk']['S']}")
    return left


def test_a_recall_receipt_sent_after_the_purge_leaves_nothing(settings: Settings, resources: LocalResources) -> None:
    scene = make_scene(settings)
    admitted = scene.admit()
    fired = _deleted_before(scene, settings, lambda params: "RECEIPT#" in params)

    result = scene.svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)

    assert fired
    assert result.status is RecallStatus.OK  # judged on the authority read before the tombstone
    assert naming(resources, scene.ws, admitted.admission.conversation_id) == []


def test_an_agent_save_sent_after_the_purge_is_refused_and_leaves_nothing(
    settings: Settings, resources: LocalResources
) -> None:
    """Its answer is part of its one transaction: there is no second write to land after the purge."""
    scene = make_scene(settings)
    admitted = scene.admit()
    adm = admitted.admission
    fired = _deleted_before(scene, settings, lambda params: "ENTRYSAVE#" in params)
    body = {"type": "fact", "title": "Deploys"}

    saved = scene.svc.agent_entries.save(
        scene.ws,
        adm.id,
        admitted.credential,
        Draft(EntryType.FACT, EntryText("Deploys", "Fridays", "")),
        None,
        body,
        "s-1",
    )

    assert fired
    assert (saved.outcome, saved.entry_id) == (Outcome.REFUSED, None)
    assert naming(resources, scene.ws, adm.conversation_id) == []


def test_a_notes_write_sent_after_the_purge_is_refused_and_leaves_nothing(
    settings: Settings, resources: LocalResources
) -> None:
    scene = make_scene(settings)
    notebook = scene.notebook("sess-straggler")
    fired = _deleted_before(scene, settings, lambda params: "NOTES#" in params and "ciphertext" in params)

    with pytest.raises(WorkspaceNotFound) as refused:
        scene.svc.notes.put(notebook, "- remember the deploy window", 0)

    assert fired
    assert refused.value.code == "WORKSPACE_NOT_FOUND"
    assert naming(resources, scene.ws) == []


def test_a_key_session_opened_after_the_purge_is_refused_and_leaves_nothing(
    settings: Settings, resources: LocalResources
) -> None:
    scene = make_scene(settings)
    fired = _deleted_before(scene, settings, lambda params: "KEYSESSION#" in params and "openedBy" in params)

    with pytest.raises(WorkspaceNotFound):
        scene.svc.key_sessions.open(scene.owner, scene.ws, None)

    assert fired
    assert naming(resources, scene.ws) == []


def test_a_key_session_revoked_after_the_purge_is_refused_and_leaves_nothing(
    settings: Settings, resources: LocalResources
) -> None:
    scene = make_scene(settings)
    session = scene.svc.key_sessions.open(scene.owner, scene.ws, None)
    fired = _deleted_before(scene, settings, lambda params: "KEYREVOKED#" in params and "revokedBy" in params)

    with pytest.raises(WorkspaceNotFound):
        scene.svc.key_sessions.revoke(scene.owner, scene.ws, session.id)

    assert fired
    assert naming(resources, scene.ws) == []
