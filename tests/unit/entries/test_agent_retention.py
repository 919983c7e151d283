"""Retention of active agent memories (docs/architecture.md#retention) over the in-memory table and a clock
moved by hand: an agent-written entry not renewed within the workspace's `agentDays` is gone for reads,
lists, the recall index and search at once (TTL deletes it later); a person's entry never expires this way;
the owner sets the window, out of range changes nothing, and a change rewrites the expiries already stamped."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_agent_memories import agent_save
from tests.unit.entries.test_entries_rules import EDITOR, OWNER, World, draft, make, snapshot
from workspace_memory.document.retention import Retention, RetentionService
from workspace_memory.entries.index import build_index
from workspace_memory.entries.model import Filters
from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.errors import EntryNotFound, Forbidden, InvalidInput
from workspace_memory.search.embedders import LocalEmbedder
from workspace_memory.search.entry_search import SearchService
from workspace_memory.store import keys

pytestmark = pytest.mark.unit


def listed(w: World) -> set[str]:
    return {r.entry_id for r in w.entries.list_entries(EDITOR, w.ws, Filters(), 100, None).rows}


def indexed(w: World) -> str:
    return build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now()).text


def found(w: World, search: SearchService) -> set[str]:
    return {r.entry_id for r in search.search(EDITOR, w.ws, "deploy Fridays", k=10).results}


def test_an_agent_memory_not_renewed_in_90_days_is_gone_and_a_persons_stays() -> None:
    w = make()
    search = SearchService(w.table, w.cipher, w.clock, LocalEmbedder(), snapshot_after=None)
    agent = agent_save(w, EDITOR, "agent note").entry_id
    person = w.entries.create(EDITOR, w.ws, draft("person note")).entry_id
    expires = int(w.clock.now()) + 90 * DAY_SECONDS
    assert w.table.items[keys.entry(w.ws, agent)]["ttl"] == expires
    assert w.table.items[keys.entry_revision(w.ws, agent, 1)]["ttl"] == expires
    assert "ttl" not in w.table.items[keys.entry(w.ws, person)]
    assert found(w, search) == {agent, person}  # warm from here on

    w.clock.advance(90 * DAY_SECONDS)  # stored still: DynamoDB's TTL has not run

    with pytest.raises(EntryNotFound):
        w.entries.read(EDITOR, w.ws, agent)
    assert listed(w) == {person}
    assert agent not in indexed(w)
    assert person in indexed(w)
    assert found(w, search) == {person}
    w.clock.advance(3650 * DAY_SECONDS)
    assert w.entries.read(EDITOR, w.ws, person).entry_id == person


def test_a_new_revision_renews_it_and_a_person_taking_it_over_ends_its_expiry() -> None:
    w = make()
    agent = agent_save(w, EDITOR, "agent note", key="ops/deploys").entry_id
    w.clock.advance(60 * DAY_SECONDS)
    assert agent_save(w, EDITOR, "agent note, again", key="ops/deploys").entry_id == agent
    w.clock.advance(60 * DAY_SECONDS)
    assert w.entries.read(EDITOR, w.ws, agent).revision == 2
    w.entries.supersede(OWNER, w.ws, agent, draft("a person's now"), 2)
    assert "ttl" not in w.table.items[keys.entry(w.ws, agent)]
    w.clock.advance(365 * DAY_SECONDS)
    assert w.entries.read(EDITOR, w.ws, agent).revision == 3


def test_an_expired_memorys_key_goes_to_a_new_chain_and_its_sweep_leaves_that_key() -> None:
    w = make()
    old = agent_save(w, EDITOR, "agent note", key="ops/deploys").entry_id
    w.clock.advance(91 * DAY_SECONDS)
    taken = w.entries.create(EDITOR, w.ws, draft("a person's", key="ops/deploys"))
    assert (taken.entry_id != old, taken.superseded) == (True, False)
    assert w.entries.forget_agent_memories(OWNER, w.ws, None).entry_ids == (old,)
    again = w.entries.create(EDITOR, w.ws, draft("a person's, later", key="ops/deploys"))
    assert (again.entry_id, again.superseded) == (taken.entry_id, True)  # the key still names the person's chain


def test_the_owner_sets_the_window_and_it_rewrites_what_is_stamped() -> None:
    w = make()
    retention = RetentionService(w.table, w.clock)
    agent = agent_save(w, EDITOR, "agent note").entry_id
    before = snapshot(w)
    for days in (0, 366, -1):
        with pytest.raises(InvalidInput):
            retention.set_windows(OWNER, w.ws, None, days)
    with pytest.raises(InvalidInput):
        retention.set_windows(OWNER, w.ws, None, None)
    with pytest.raises(Forbidden):
        retention.set_windows(EDITOR, w.ws, None, 10)
    assert snapshot(w) == before
    assert retention.windows(EDITOR, w.ws) == Retention(90, 90)

    assert retention.set_windows(OWNER, w.ws, None, 10) == Retention(90, 10)
    expires = int(w.clock.now()) + 10 * DAY_SECONDS
    assert w.table.items[keys.entry(w.ws, agent)]["ttl"] == expires
    assert w.table.items[keys.entry_revision(w.ws, agent, 1)]["ttl"] == expires
    w.clock.advance(10 * DAY_SECONDS)
    assert listed(w) == set()
    retention.set_windows(OWNER, w.ws, None, 365)  # a longer window never revives it
    assert w.table.items[keys.entry(w.ws, agent)]["ttl"] == expires
    assert listed(w) == set()
    later = agent_save(w, EDITOR, "written under 365").entry_id
    assert w.table.items[keys.entry(w.ws, later)]["ttl"] == int(w.clock.now()) + 365 * DAY_SECONDS


def test_a_candidate_under_an_expired_memorys_key_names_no_chain() -> None:
    w = make()
    agent_save(w, EDITOR, "agent note", key="ops/deploys")
    w.clock.advance(90 * DAY_SECONDS)
    candidate = w.entries.propose(EDITOR, w.ws, draft("proposed", key="ops/deploys"))
    assert "entryId" not in w.table.items[keys.entry_candidate(w.ws, candidate)]
