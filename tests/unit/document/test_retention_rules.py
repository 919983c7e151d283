"""Retention and purge over the in-memory table: the races that keep them exact, landed by hand between a
service's read and its write (`MemoryTable.before_transact`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.memory_table import MemoryTable
from tests.unit.turns.test_services import DOC, EDITOR, OWNER, World
from workspace_memory.document.purge import LineInHead, PurgeService
from workspace_memory.document.retention import RetentionService
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds
from workspace_memory.kernel.errors import Conflict
from workspace_memory.store import keys
from workspace_memory.turns.capture import Outcome

pytestmark = pytest.mark.unit


def once(action: Callable[[], object], on_call: int = 1) -> Callable[[MemoryTable], None]:
    """A `before_transact` hook that runs `action` just before the `on_call`-th transaction, then never again."""
    seen = 0

    def hook(table: MemoryTable) -> None:
        nonlocal seen
        seen += 1
        if seen == on_call:
            table.before_transact = None
            action()

    return hook


def ttl_of(w: World, ws: str, number: int) -> int:
    return int(w.table.items[keys.version(ws, number)]["ttl"])


def expected(w: World, ws: str, number: int, days: int) -> int:
    return epoch_seconds(w.table.items[keys.version(ws, number + 1)]["createdAt"]) + days * DAY_SECONDS


def test_a_warm_save_stays_one_transaction_with_the_retention_check() -> None:
    w = World()
    ws = w.workspace()
    w.document.save(OWNER, ws, DOC + "- two\n", 1)
    reads, transactions = w.table.reads, w.table.transactions
    w.document.save(OWNER, ws, DOC + "- three\n", 2)
    assert (w.table.reads - reads, w.table.transactions - transactions) == (0, 1)
    assert ttl_of(w, ws, 2) == expected(w, ws, 2, 90)


@pytest.mark.parametrize("write", ["save", "clear", "undo", "capture", "apply"])
def test_a_retention_change_between_read_and_write_is_applied_to_the_superseded_version(write: str) -> None:
    w = World()
    ws = w.workspace()
    retention = RetentionService(w.table, w.clock)
    w.document.save(OWNER, ws, DOC + "- two\n", 1)  # the document service now holds 90 days for ws
    admitted = w.admit(ws)
    w.table.before_transact = once(lambda: retention.set(OWNER, ws, 3))
    if write == "save":
        w.document.save(OWNER, ws, "three", 2)
    elif write == "clear":
        w.document.clear(OWNER, ws, 2)
    elif write == "undo":
        w.document.undo(OWNER, ws, 1, 2)
    elif write == "capture":
        assert w.capture_add(ws, admitted, base=2).outcome is Outcome.COMMITTED
    else:
        w.capture.apply_proposal(EDITOR, ws, [{"op": "add", "line": "- applied"}], 0, 2)
    assert w.head(ws)[0] == 3
    assert ttl_of(w, ws, 2) == expected(w, ws, 2, 3)  # not 90: the change landed first
    assert ttl_of(w, ws, 1) == expected(w, ws, 1, 3)  # rewritten by the change itself


@pytest.mark.parametrize("write", ["save", "capture"])
def test_a_retention_that_moves_again_before_the_retry_is_not_retried_twice(write: str) -> None:
    w = World()
    ws = w.workspace()
    retention = RetentionService(w.table, w.clock)
    w.document.save(OWNER, ws, DOC + "- two\n", 1)
    admitted = w.admit(ws)
    changes = [lambda: retention.set(OWNER, ws, 3), lambda: retention.set(OWNER, ws, 5)]

    def before_each(table: MemoryTable) -> None:  # one retention change before each of the first two tries
        table.before_transact = None
        changes.pop(0)()
        table.before_transact = before_each if changes else None

    w.table.before_transact = before_each
    if write == "save":
        with pytest.raises(Conflict, match="retention changed concurrently"):
            w.document.save(OWNER, ws, "three", 2)
    else:
        result = w.capture_add(ws, admitted, base=2)
        assert (result.outcome, result.predicate) == (Outcome.REFUSED, "consent")
    assert not changes
    assert w.head(ws)[0] == 2


def test_a_capture_is_refused_for_consent_when_consent_changed_not_retried() -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws)
    w.table.before_transact = once(lambda: w.access.set_ai(OWNER, ws, True))  # bumps the consent revision
    result = w.capture_add(ws, admitted, base=1)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, "consent")
    assert w.head(ws)[0] == 1


def test_an_older_retention_change_stops_when_a_newer_one_lands_during_its_rewrite() -> None:
    w = World()
    ws = w.workspace()
    for base in (1, 2, 3):
        w.clock.advance(DAY_SECONDS)
        w.document.save(OWNER, ws, f"v{base + 1}", base)
    first, second = RetentionService(w.table, w.clock), RetentionService(w.table, w.clock)
    # The first change's own write is transaction 1; its rewrite's first batch is transaction 2.
    w.table.before_transact = once(lambda: second.set(OWNER, ws, 20), on_call=2)
    first.set(OWNER, ws, 10)
    assert w.table.items[keys.meta(ws)]["historyDays"] == 20
    assert [ttl_of(w, ws, n) for n in (1, 2, 3)] == [expected(w, ws, n, 20) for n in (1, 2, 3)]


def test_a_version_holding_the_line_written_during_a_purge_makes_it_look_again() -> None:
    w = World()
    ws = w.workspace(content="# Memory\n- secret\n")
    w.document.save(OWNER, ws, "# Memory\n", 1)
    purge = PurgeService(w.table, w.cipher, w.clock)
    w.table.before_transact = once(lambda: w.document.save(OWNER, ws, "# Memory\n- secret\n", 2))
    with pytest.raises(LineInHead):
        purge.purge(OWNER, ws, "- secret")
    assert all("ciphertext" in w.table.items[keys.version(ws, n)] for n in (1, 2, 3))


def test_a_purge_of_a_line_only_history_holds_leaves_stubs_that_keep_their_metadata() -> None:
    w = World()
    ws = w.workspace(content="# Memory\n- secret\n")
    w.document.save(OWNER, ws, "# Memory\n", 1)
    before = dict(w.table.items[keys.version(ws, 1)])
    assert PurgeService(w.table, w.cipher, w.clock).purge(OWNER, ws, "- secret").versions == [1]
    stub = w.table.items[keys.version(ws, 1)]
    assert "ciphertext" not in stub
    assert {k: v for k, v in stub.items() if k not in ("purgedAt", "purgedBy")} == {
        k: v for k, v in before.items() if k != "ciphertext"
    }
    assert stub["purgedBy"] == OWNER
