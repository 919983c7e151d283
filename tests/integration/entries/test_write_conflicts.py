"""The write-time contradiction check (decisions/0087), on the moto server with real encryption and the local
embedder: a save is answered with the live entries it may contradict (ids and revisions only); a person's write
is written anyway; an agent's `auto` write that may contradict becomes a candidate a member decides, keeping
what it contradicts; what the writer may not read never takes part; a chain is never its own conflict; a
duplicate or an unrelated entry is no conflict."""

from __future__ import annotations

import pytest

from tests.integration.entries.test_entry_fence_matrix import EDITOR, _admitted, _scene, entry_items, save
from tests.integration.fence_support import Scene
from workspace_memory.document.policy import Mode
from workspace_memory.entries.agent_results import SaveResult
from workspace_memory.entries.model import Draft, EntryText, PossibleConflict
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import CandidateStatus, EntryScope, EntryType, Outcome
from workspace_memory.store import attributes, entry_queries
from workspace_memory.turns.admission import Admitted

pytestmark = pytest.mark.integration

TUESDAY = EntryText(
    "Deploy window", "Deploys happen on Tuesday afternoons", "The team ships to production every Tuesday after lunch."
)
FRIDAY = EntryText(
    "Deploy window", "Deploys happen on Friday mornings", "The team ships to production every Friday before noon."
)
PLANTS = EntryText("Office plants", "The ficus needs water weekly", "Water the ficus in the lobby every Monday.")


def create(scene: Scene, user: str, text: EntryText, scope: EntryScope = EntryScope.WORKSPACE) -> str:
    return scene.svc.entries.create(user, scene.ws, Draft(EntryType.FACT, text, scope)).entry_id


def entries(scene: Scene) -> list[dict[str, object]]:
    """The workspace's entry heads and revisions as stored (candidates, rate windows and markers aside)."""
    return [item for item in entry_items(scene) if str(item["sk"]).startswith(("ENTRY#", "ENTRYREV#"))]


def agent_save(scene: Scene, text: EntryText, idem: str = "save-1", admitted: Admitted | None = None) -> SaveResult:
    admitted = admitted or _admitted(scene)
    return save(scene, admitted, title=text.title, summary=text.summary, body_text=text.body, idem=idem)


def test_a_persons_write_is_written_and_answered_with_what_it_may_contradict(settings: Settings) -> None:
    scene = _scene(settings)
    tuesday = create(scene, scene.owner, TUESDAY)
    written = scene.svc.entries.create(EDITOR, scene.ws, Draft(EntryType.FACT, FRIDAY))
    assert written.possible_conflicts == (PossibleConflict(tuesday, 1),)
    assert scene.svc.entries.read(EDITOR, scene.ws, written.entry_id).text.summary == FRIDAY.summary  # written
    assert scene.svc.entries.read(EDITOR, scene.ws, tuesday).revision == 1  # and the other one untouched


def test_a_duplicate_or_an_unrelated_entry_is_no_conflict(settings: Settings) -> None:
    scene = _scene(settings)
    create(scene, scene.owner, TUESDAY)
    assert scene.svc.entries.create(EDITOR, scene.ws, Draft(EntryType.FACT, TUESDAY)).possible_conflicts == ()
    assert scene.svc.entries.create(EDITOR, scene.ws, Draft(EntryType.FACT, PLANTS)).possible_conflicts == ()


def test_revising_a_chain_is_not_its_own_conflict(settings: Settings) -> None:
    scene = _scene(settings)
    tuesday = create(scene, scene.owner, TUESDAY)
    revised = scene.svc.entries.supersede(scene.owner, scene.ws, tuesday, Draft(EntryType.FACT, FRIDAY), 1)
    assert (revised.revision, revised.possible_conflicts) == (2, ())
    keyed = EntryText(TUESDAY.title, TUESDAY.summary, TUESDAY.body, (), "ops/deploy-window")
    first = scene.svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, keyed))
    friday_keyed = EntryText(FRIDAY.title, FRIDAY.summary, FRIDAY.body, (), "ops/deploy-window")
    over = scene.svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, friday_keyed))
    # the key names the chain it supersedes: that chain is left out; the other (revised) chain now says Friday
    assert (over.entry_id, over.superseded, over.possible_conflicts) == (first.entry_id, True, ())


def test_an_agents_auto_write_that_may_contradict_is_held_and_accepting_writes_it(settings: Settings) -> None:
    scene = _scene(settings)
    tuesday = create(scene, scene.owner, TUESDAY)
    before = entries(scene)
    admitted = _admitted(scene)
    held = agent_save(scene, FRIDAY, admitted=admitted)
    assert (held.outcome, held.entry_id, held.possible_conflicts) == (
        Outcome.PROPOSAL,
        None,
        (PossibleConflict(tuesday, 1),),
    )
    assert held.candidate_id is not None
    assert entries(scene) == before  # nothing written: a candidate instead
    replayed = agent_save(scene, FRIDAY, admitted=admitted)  # the same Idempotency-Key: the first answer
    assert (replayed.replayed, replayed.possible_conflicts) == (True, held.possible_conflicts)
    views, _ = scene.svc.entries.candidates(scene.owner, scene.ws, 10, None)
    assert [(v.candidate_id, v.possible_conflicts) for v in views] == [(held.candidate_id, held.possible_conflicts)]
    # the candidate and the save's marker keep the ids in clear, of their declared form, and no text
    stored = [i for i in entry_items(scene) if str(i["sk"]).startswith(("ENTRYCAND#", "ENTRYSAVE#"))]
    assert [i.get("possibleConflicts") or i["answer"]["possibleConflicts"] for i in stored] == [[f"{tuesday}@1"]] * 2
    assert [v for i in stored for v in attributes.violations(i)] == []
    written = scene.svc.entries.accept(scene.owner, scene.ws, held.candidate_id, 1)
    assert written.possible_conflicts is None  # a person decided, having seen what it contradicts
    assert scene.svc.entries.read(scene.owner, scene.ws, written.entry_id).text.summary == FRIDAY.summary
    assert scene.svc.entries.read(scene.owner, scene.ws, tuesday).revision == 1


def test_rejecting_a_held_write_changes_no_entry(settings: Settings) -> None:
    scene = _scene(settings)
    create(scene, scene.owner, TUESDAY)
    before = entries(scene)
    held = agent_save(scene, FRIDAY)
    assert held.candidate_id is not None
    scene.svc.entries.reject(scene.owner, scene.ws, held.candidate_id, 1)
    assert entries(scene) == before
    (record,) = [
        r for _, r in entry_queries.candidates(scene.svc.table, scene.ws) if r.candidate_id == held.candidate_id
    ]
    assert record.status is CandidateStatus.REJECTED
    assert record.ciphertext is None


def test_read_only_candidates_keep_what_they_may_contradict(settings: Settings) -> None:
    scene = _scene(settings, Mode.READ_ONLY)
    tuesday = create(scene, scene.owner, TUESDAY)
    proposed = agent_save(scene, FRIDAY)
    assert (proposed.outcome, proposed.possible_conflicts) == (Outcome.PROPOSAL, (PossibleConflict(tuesday, 1),))
    unrelated = agent_save(scene, PLANTS, idem="save-2")
    assert (unrelated.outcome, unrelated.possible_conflicts) == (Outcome.PROPOSAL, ())


def test_another_members_private_entry_never_shows_nor_holds_an_agents_write(settings: Settings) -> None:
    scene = _scene(settings)
    private = create(scene, scene.owner, TUESDAY, EntryScope.MEMBER)
    # the owner's own write sees her own private entry
    mine = scene.svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, FRIDAY, EntryScope.MEMBER))
    assert mine.possible_conflicts == (PossibleConflict(private, 1),)
    # the editor may not read it: not in her write's answer, and her agent's write is committed, not held
    assert scene.svc.entries.create(EDITOR, scene.ws, Draft(EntryType.FACT, FRIDAY)).possible_conflicts == ()
    saved = agent_save(scene, FRIDAY)
    assert (saved.outcome, saved.possible_conflicts) == (Outcome.COMMITTED, ())


def test_the_check_costs_a_warm_process_no_decrypt_and_at_most_the_index_refresh(settings: Settings) -> None:
    """AWS calls per save, warm, with and without the check: the check reuses the warm index and reads the
    entries counter in the caller's own read; what it adds is the index's refresh after the previous write (one
    metadata listing, one read of the revisions written since), never a KMS call nor a decrypt of the workspace."""
    from tests.integration.adapters.test_branch_keys import Calls

    scene = _scene(settings)
    svc = scene.svc
    for n in range(20):
        create(scene, scene.owner, EntryText(f"Topic {n}", f"Fact number {n} about topic {n}", f"Body {n}."))
    calls = Calls(svc.clients.dynamodb, svc.clients.kms, svc.clients.key_store)
    finder = svc.entries.write_check.finder

    def counted(n: int, *, checked: bool) -> list[str]:
        svc.entries.write_check.finder = finder if checked else None
        create(scene, EDITOR, PLANTS)  # the index refreshed on the check before, warm now at the next revision
        calls.clear()
        text = EntryText(f"Note {n}", f"Something new number {n}", "Nothing else.")
        written = svc.entries.create(EDITOR, scene.ws, Draft(EntryType.FACT, text))
        assert (written.possible_conflicts is not None) is checked
        return calls.names()

    counted(0, checked=True)  # warms the index
    without, checked = counted(1, checked=False), counted(2, checked=True)
    print(f"\nperson create: without the check {len(without)} calls {sorted(without)}")
    print(f"person create: with the check {len(checked)} calls {sorted(checked)}")
    assert [c for c in checked if c.startswith("kms.")] == [c for c in without if c.startswith("kms.")] == []
    extra = list(checked)
    for name in without:
        extra.remove(name)
    # the refresh: the metadata listing (a page, then the empty one that ends it) and the one new revision
    assert sorted(extra) == ["dynamodb.Query", "dynamodb.Query", "dynamodb.TransactGetItems"]
    assert svc.search.last_build is not None
    assert svc.search.last_build.decrypted == 1  # the revision written since, not the workspace
    svc.entries.write_check.finder = finder
    admitted = _admitted(scene)
    agent_save(scene, PLANTS, idem="warm", admitted=admitted)
    calls.clear()
    agent_save(scene, EntryText("Agent note", "Something the agent learned", "Nothing else."), "a", admitted)
    agent_checked = calls.names()
    svc.entries.write_check.finder = None
    agent_save(scene, PLANTS, idem="warm-off", admitted=admitted)
    calls.clear()
    agent_save(scene, EntryText("Agent note 2", "Something else the agent learned", "None."), "b", admitted)
    agent_without = calls.names()
    svc.entries.write_check.finder = finder
    print(f"agent save: without the check {len(agent_without)} calls {sorted(agent_without)}")
    print(f"agent save: with the check {len(agent_checked)} calls {sorted(agent_checked)}")
    agent_extra = list(agent_checked)
    for name in agent_without:
        agent_extra.remove(name)
    assert sorted(agent_extra) == sorted(extra)  # the same refresh, nothing else
