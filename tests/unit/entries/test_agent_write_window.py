"""The agent write rate over the in-memory table: at most `limit` writes per key session in any rolling hour
(not per clock hour), each key session (and a user's own turns) with a window of its own, a full window
trimmed of what aged out, and a refused write leaving every item as it was."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, World, draft, make, snapshot
from workspace_memory.entries.limits import HOUR, OWN_TURNS
from workspace_memory.kernel.errors import RateLimited
from workspace_memory.store import keys
from workspace_memory.turns.admission import AdmissionRef

pytestmark = pytest.mark.unit


def admission(key_session_id: str | None) -> str:
    """An admission id as the service issues them: it names the key session it was granted through."""
    return AdmissionRef("conv", "ws", EDITOR, key_session_id).encode("adm_" + "0" * 24)


def agent_write(w: World, admission_id: str | None = None) -> str:
    return w.entries.propose(EDITOR, w.ws, draft(), admission_id=admission_id)


def window(w: World, holder: str = OWN_TURNS) -> dict[str, int]:
    item = w.table.items[keys.agent_rate(w.ws, EDITOR, holder)]
    return dict(item["window"])


def test_the_limit_holds_over_any_hour_not_per_clock_hour() -> None:
    """Three writes a minute before a clock hour ends leave no room a minute after it begins: a clock-hour
    bucket would have started afresh. Room comes back exactly an hour after the first of them."""
    w = make(rate=3)
    w.clock.advance(HOUR - w.clock.now() % HOUR - 60)  # HH:59:00
    for _ in range(3):
        agent_write(w)
    w.clock.advance(90)  # the next clock hour, 00:30 into it
    before = snapshot(w)

    with pytest.raises(RateLimited) as limited:
        agent_write(w)

    assert limited.value.details["retry_after"] == HOUR - 90
    assert snapshot(w) == before
    w.clock.advance(HOUR - 90 - 1)
    with pytest.raises(RateLimited):
        agent_write(w)  # a second before the first write's hour ends
    w.clock.advance(1)
    agent_write(w)


def test_room_comes_back_one_write_at_a_time() -> None:
    """Writes spread over the hour free their room one by one, each an hour after it was made."""
    w = make(rate=3)
    for _ in range(3):
        agent_write(w)
        w.clock.advance(600)
    with pytest.raises(RateLimited) as limited:
        agent_write(w)  # 30 minutes after the first write
    assert limited.value.details["retry_after"] == HOUR - 1800
    w.clock.advance(HOUR - 1800)
    agent_write(w)  # the first write aged out
    with pytest.raises(RateLimited) as again:
        agent_write(w)
    assert again.value.details["retry_after"] == 600  # the second write's hour ends next


def test_each_key_session_has_its_own_window() -> None:
    """One user's writes through two key sessions and through their own turns count in three windows."""
    w = make(rate=2)
    first, second = admission("ks_" + "1" * 24), admission("ks_" + "2" * 24)
    for admission_id in (first, second, None):
        agent_write(w, admission_id)
        agent_write(w, admission_id)
    for admission_id in (first, second, None):
        with pytest.raises(RateLimited):
            agent_write(w, admission_id)
    assert len(window(w, "ks_" + "1" * 24)) == len(window(w, "ks_" + "2" * 24)) == len(window(w)) == 2


def test_a_full_window_sheds_what_aged_out_and_never_grows_past_the_limit() -> None:
    w = make(rate=3)
    for _ in range(3):
        agent_write(w)
    w.clock.advance(HOUR)
    agent_write(w)

    assert len(window(w)) == 1  # the three aged-out writes removed by the write that found the window full
    assert list(window(w).values()) == [int(w.clock.now() * 1000)]


def test_a_human_write_is_not_counted() -> None:
    w = make(rate=1)
    agent_write(w)
    w.entries.create(EDITOR, w.ws, draft())
    w.entries.propose(EDITOR, w.ws, draft(), admission_id=admission("ks_" + "3" * 24))
    assert len(window(w)) == 1
