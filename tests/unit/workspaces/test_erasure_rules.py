"""Erasing a member, as pure rules and over the in-memory table: what an item becomes, and the steps run by
hand (the workflow's loop), retried after they landed, resumed after a start that never happened."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, World, draft, make
from workspace_memory.kernel.errors import (
    ConfirmationMismatch,
    ConfirmationRequired,
    Forbidden,
    MemberNotFound,
    OwnerNotErasable,
)
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store import keys
from workspace_memory.store.erasure_records import ErasureRecord, deleted_by_erasure, rewrite_of
from workspace_memory.turns.admission import AdmissionRef
from workspace_memory.workspaces.erasure import ErasureService
from workspace_memory.workspaces.erasure_contract import ErasureInput, Phase
from workspace_memory.workspaces.erasure_steps import MemberErasureSteps, renaming

pytestmark = pytest.mark.unit

SUBJECT, PSEUDONYM = "u-leaver", "erased-" + "0" * 24


def same(value: str) -> str:
    return PSEUDONYM if value == SUBJECT else value


def test_a_rewrite_replaces_the_id_at_any_depth_and_drops_attributes_named_after_it() -> None:
    item = {
        "pk": "WS#w",
        "sk": "AUDIT#1#a",
        "actor": SUBJECT,
        "targets": [{"kind": "member", "id": SUBJECT}, {"kind": "entry", "id": "en_1"}],
        f"versions#{SUBJECT}": 0,
        "versions": 3,
        "note": f"{SUBJECT}x",  # a longer id that merely starts with theirs is someone else's
    }
    rewrite = rewrite_of(item, SUBJECT, same)
    assert rewrite is not None
    assert dict(rewrite.after) == {
        "actor": PSEUDONYM,
        "targets": [{"kind": "member", "id": PSEUDONYM}, {"kind": "entry", "id": "en_1"}],
        f"versions#{SUBJECT}": None,
    }
    assert set(rewrite.before) == set(rewrite.after)
    assert rewrite_of({"pk": "WS#w", "sk": f"DOC#V#{SUBJECT}", "author": "u-other"}, SUBJECT, same) is None


def test_what_is_theirs_alone_is_deleted_and_a_near_miss_is_not() -> None:
    assert deleted_by_erasure({"pk": "WS#w", "sk": f"NOTES#{SUBJECT}#s1"}, SUBJECT)
    assert deleted_by_erasure({"pk": "WS#w", "sk": f"ENTRYRATE#7#{SUBJECT}"}, SUBJECT)
    assert not deleted_by_erasure({"pk": "WS#w", "sk": f"NOTES#{SUBJECT}x#s1"}, SUBJECT)
    assert deleted_by_erasure({"pk": "WS#w", "sk": "KEYSESSION#ks_1", "openedBy": SUBJECT}, SUBJECT)
    assert not deleted_by_erasure({"pk": "WS#w", "sk": "KEYREVOKED#ks_1", "revokedBy": SUBJECT}, SUBJECT)
    assert deleted_by_erasure({"pk": "WS#w", "sk": "ENTRYCAND#ec_1", "proposedBy": SUBJECT}, SUBJECT)
    # Archives built before the erasure hold the member's data: they go, whoever asked for them.
    assert deleted_by_erasure({"pk": "WS#w", "sk": "EXPORT#ex_1", "requestedBy": "u-owner"}, SUBJECT)
    assert deleted_by_erasure({"pk": "WS#w", "sk": "EXPORTPART#ex_1#entries.json#0000"}, SUBJECT)
    shared = {"pk": "WS#w", "sk": "ENTRY#en_1", "scope": "workspace", "scopeOwner": "-", "author": SUBJECT}
    assert not deleted_by_erasure(shared, SUBJECT)


def test_an_admission_id_that_encodes_the_member_is_encoded_anew_with_the_pseudonym() -> None:
    rename = renaming(SUBJECT, PSEUDONYM)
    theirs = AdmissionRef("conv-1", "w", SUBJECT, "ks_1").encode("adm_" + "a" * 24)
    renamed = AdmissionRef.parse(rename(theirs))
    assert (renamed.user_id, renamed.conversation_id, renamed.key_session_id) == (PSEUDONYM, "conv-1", "ks_1")
    assert rename(theirs).partition(".")[0] == "adm_" + "a" * 24  # still the same admission
    others = AdmissionRef("conv-2", "w", "u-other", None).encode("adm_" + "b" * 24)
    assert (rename(others), rename("adm_not-an-id"), rename(SUBJECT)) == (others, "adm_not-an-id", PSEUDONYM)


class Runner:
    def __init__(self, fail: bool = False) -> None:
        self.started: list[ErasureInput] = []
        self.fail = fail

    def start(self, erasure: ErasureInput) -> None:
        if self.fail:
            raise ConnectionError("temporal is down")
        self.started.append(erasure)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple | set):
        for v in value:
            yield from _strings(v)


def naming(w: World, user: str) -> list[tuple[str, str]]:
    return [key for key, item in w.table.items.items() if any(user in s for s in [*key, *_strings(item)])]


def run_all(steps: MemberErasureSteps, ws: str, erasure_id: str, *, twice: bool = False) -> None:
    """The workflow's loop, by hand; `twice`: every step sent again after it landed (a lost answer)."""
    for phase in Phase:
        after: str | None = None
        while True:
            result = steps.step(ws, erasure_id, phase, after)
            if twice:
                steps.step(ws, erasure_id, phase, after)
            if not result.more:
                break
            after = result.after


def scene() -> tuple[World, str, str]:
    w = make()
    w.documents.save(EDITOR, w.ws, "# Team\n- theirs\n", 0)
    shared = w.entries.create(EDITOR, w.ws, draft("Deploys")).entry_id
    w.entries.create(EDITOR, w.ws, draft("Mine", scope=EntryScope.MEMBER))
    return w, shared, EDITOR


@pytest.mark.parametrize("twice", [False, True], ids=["once", "every step twice"])
def test_the_steps_leave_no_trace_and_count_each_item_once(twice: bool) -> None:
    w, shared, member = scene()
    runner = Runner()
    record = ErasureService(w.table, w.clock, runner).erase(OWNER, w.ws, member, member)
    assert runner.started == [ErasureInput(workspace_id=w.ws, erasure_id=record.erasure_id)]
    assert w.table.get(*keys.member(w.ws, member)) is None  # at once, in the request
    steps = MemberErasureSteps(w.table, w.clock, w.entries.forgetting, batch=3)
    run_all(steps, w.ws, record.erasure_id, twice=twice)

    assert naming(w, member) == []
    done = ErasureRecord.of(w.table.get(*keys.erasure(w.ws, record.erasure_id)))
    assert done is not None
    assert (done.status, done.subject) == ("completed", None)
    assert dict(done.deleted) == {"member": 1, "entry": 1}  # the membership, the private entry's tombstone
    assert done.pseudonymized["document-version"] == 1
    assert done.pseudonymized["entry"] == 1
    assert w.entries.read(VIEWER, w.ws, shared).author == record.pseudonym


def test_refusals_change_nothing() -> None:
    w, _, member = scene()
    service = ErasureService(w.table, w.clock, Runner())
    before = dict(w.table.items)
    refusals: list[tuple[str, str, str | None, type[Exception]]] = [
        (OWNER, member, None, ConfirmationRequired),
        (OWNER, member, VIEWER, ConfirmationMismatch),
        (VIEWER, member, member, Forbidden),
        (OWNER, OWNER, OWNER, OwnerNotErasable),
        (OWNER, "u-nobody", "u-nobody", MemberNotFound),
    ]
    for caller, target, confirmation, error in refusals:
        with pytest.raises(error):
            service.erase(caller, w.ws, target, confirmation)
    assert w.table.items == before


def test_a_start_that_never_happened_is_resumed_by_asking_again() -> None:
    w, _, member = scene()
    with pytest.raises(ConnectionError):
        ErasureService(w.table, w.clock, Runner(fail=True)).erase(OWNER, w.ws, member, member)
    runner = Runner()
    resumed = ErasureService(w.table, w.clock, runner).erase(OWNER, w.ws, member, member)
    assert runner.started == [ErasureInput(workspace_id=w.ws, erasure_id=resumed.erasure_id)]
    assert resumed.subject == member


def test_the_histories_phase_names_the_members_turns_and_no_one_elses() -> None:
    w, _, member = scene()
    admissions = [(member, "turn-a"), (member, "turn-b"), (member, None), (OWNER, "turn-owner"), (member, "turn-a")]
    for n, (user, turn) in enumerate(admissions):
        pk, sk = keys.admission(f"adm_{n:024d}")
        w.table.put({"pk": pk, "sk": sk, "workspaceId": w.ws, "userId": user, **({"turnId": turn} if turn else {})})
    record = ErasureService(w.table, w.clock, Runner()).erase(OWNER, w.ws, member, member)
    steps = MemberErasureSteps(w.table, w.clock, w.entries.forgetting, batch=2)
    before = dict(w.table.items)
    found: list[str] = []
    after: str | None = None
    while (result := steps.step(w.ws, record.erasure_id, Phase.HISTORIES, after)).more:
        found += result.turns
        after = result.after
    assert sorted(set(found)) == ["turn-a", "turn-b"]  # pages name their own: a turn on two is deleted twice
    assert w.table.items == before  # the phase only reads: a retried step finds the same turns
