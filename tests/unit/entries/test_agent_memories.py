"""The owner's forget of every agent memory (docs/architecture.md#agent-memories) over the in-memory table:
agent chains of every scope and member go with their revisions, pending candidates are dismissed, nothing is
decrypted, people's entries and their history stay exactly as they were, and a large workspace resumes."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, World, draft, make, snapshot
from workspace_memory.entries import agent_memories
from workspace_memory.entries.model import Author, Written
from workspace_memory.kernel.errors import EntryForgotten, Forbidden, InvalidInput
from workspace_memory.kernel.terms import CandidateStatus, EntryScope
from workspace_memory.store import keys
from workspace_memory.store.cursors import encode_cursor
from workspace_memory.store.ports import Item
from workspace_memory.workspaces.access import load_caller

pytestmark = pytest.mark.unit


def agent_save(
    w: World, user: str, title: str, *, scope: EntryScope = EntryScope.WORKSPACE, key: str | None = None
) -> Written:
    caller, _ = load_caller(w.table, w.ws, user)
    return w.entries.create_fenced(caller, draft(title, scope=scope, key=key), Author(user, "agent", "adm_1"), [])


def human_items(w: World, entry_id: str) -> dict[keys.Key, Item]:
    return {k: v for k, v in w.table.items.items() if entry_id in k[1]}


def test_every_agent_memory_goes_and_people_keep_theirs_unread() -> None:
    w = make()
    shared = agent_save(w, EDITOR, "agent shared")
    private = agent_save(w, VIEWER, "agent private", scope=EntryScope.MEMBER)
    superseded = agent_save(w, EDITOR, "agent twice", key="ops/k")
    assert agent_save(w, EDITOR, "agent again", key="ops/k").superseded
    human = w.entries.create(EDITOR, w.ws, draft("person"))
    w.entries.supersede(EDITOR, w.ws, human.entry_id, draft("person, later"), 1)
    mixed = agent_save(w, EDITOR, "agent first")
    w.entries.supersede(OWNER, w.ws, mixed.entry_id, draft("a person corrected it"), 1)
    candidate = w.entries.propose(VIEWER, w.ws, draft("proposed", scope=EntryScope.MEMBER))
    kept = {e: human_items(w, e) for e in (human.entry_id, mixed.entry_id)}
    decrypts = w.cipher.decrypts

    done = w.entries.forget_agent_memories(OWNER, w.ws, None)

    assert w.cipher.decrypts == decrypts
    assert sorted(done.entry_ids) == sorted([shared.entry_id, private.entry_id, superseded.entry_id])
    assert (done.left, done.candidate_ids, done.next_cursor) == (2, (candidate,), None)
    for entry_id in done.entry_ids:
        assert not [k for k in w.table.items if k[1].startswith(keys.entry_revisions_prefix(entry_id))]
        assert w.table.items[keys.entry(w.ws, entry_id)]["status"] == "forgotten"
    with pytest.raises(EntryForgotten):
        w.entries.read(VIEWER, w.ws, private.entry_id)
    assert {e: human_items(w, e) for e in kept} == kept
    cand = w.table.items[keys.entry_candidate(w.ws, candidate)]
    assert cand["status"] == CandidateStatus.REJECTED.value
    assert "ciphertext" not in cand
    assert w.entries.candidates(VIEWER, w.ws, 10, None) == ([], None)


def test_a_retry_changes_nothing_and_others_are_refused() -> None:
    w = make()
    agent_save(w, EDITOR, "agent")
    w.entries.create(EDITOR, w.ws, draft("person"))
    before = snapshot(w)
    for user in (EDITOR, VIEWER):
        with pytest.raises(Forbidden):
            w.entries.forget_agent_memories(user, w.ws, None)
    with pytest.raises(InvalidInput):
        w.entries.forget_agent_memories(OWNER, w.ws, encode_cursor("DOC#V#000000000001"))
    assert snapshot(w) == before
    w.entries.forget_agent_memories(OWNER, w.ws, None)
    after = snapshot(w)
    again = w.entries.forget_agent_memories(OWNER, w.ws, None)
    assert (again.entry_ids, again.candidate_ids, again.left) == ((), (), 1)
    assert snapshot(w) == after


def test_a_large_workspace_resumes_from_the_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_memories, "SWEEP_BUDGET", 2)
    w = make()
    saved = {agent_save(w, EDITOR, f"agent {n}").entry_id for n in range(3)}
    candidates = {w.entries.propose(EDITOR, w.ws, draft(f"proposed {n}")) for n in range(3)}
    forgotten: set[str] = set()
    dismissed: set[str] = set()
    cursor: str | None = None
    calls = 0
    while True:
        calls += 1
        done = w.entries.forget_agent_memories(OWNER, w.ws, cursor)
        forgotten |= set(done.entry_ids)
        dismissed |= set(done.candidate_ids)
        if done.next_cursor is None:
            break
        cursor = done.next_cursor
    assert (forgotten, dismissed) == (saved, candidates)
    assert calls == 3  # 2 heads; 1 head and 2 candidates; 1 candidate
