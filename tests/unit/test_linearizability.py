"""The history checker of the 12-client test (tests/linearizability.py) on small histories whose verdict is known."""

from __future__ import annotations

from tests.linearizability import Op, check


def save(start: int, end: int, base: int, *, made: int | None = None, current: int | None = None) -> Op:
    """A 200 (`made`) or a 409 (`current`) of a Save on `base` over `[start, end]`."""
    if made is not None:
        return Op(0, "save", start, end, made, True, base, f"v{made}")
    assert current is not None
    return Op(0, "save", start, end, current, False, base)


def read(start: int, end: int, version: int) -> Op:
    return Op(1, "read", start, end, version, content=f"v{version}" if version else None)


def test_a_sequential_history_is_linearizable_and_its_points_lie_in_the_saves() -> None:
    verdict = check([save(0, 10, 0, made=1), read(20, 30, 1), save(40, 50, 0, current=1), save(60, 70, 1, made=2)])
    assert verdict.linearizable, verdict.problems
    assert (verdict.ops, verdict.saved, verdict.refused, verdict.observations) == (4, 2, 1, 2)
    assert verdict.points == {1: 0, 2: 60}


def test_overlapping_observations_may_see_either_side_of_a_save() -> None:
    for seen in (0, 1):
        assert check([save(0, 100, 0, made=1), read(10, 20, seen), save(30, 40, 3, current=seen)]).linearizable


def test_a_409_that_names_its_own_base_is_refused_whatever_the_timing() -> None:
    """The measured contradiction: "base 3 is not the current version", currentVersion 3."""
    history = [save(0, 10, 0, made=1), save(0, 10, 1, made=2), save(0, 10, 2, made=3), save(5, 50, 3, current=3)]
    verdict = check(history)
    assert not verdict.linearizable
    assert "cannot name its own base" in verdict.problems[0]


def test_a_409_naming_a_version_superseded_before_it_began_is_not_linearizable() -> None:
    """Version 2 was current for the whole of [40, 50]: a 409 there cannot have seen version 1."""
    verdict = check([save(0, 10, 0, made=1), save(20, 30, 1, made=2), save(40, 50, 0, current=1)])
    assert not verdict.linearizable
    assert "would have to land" in verdict.problems[0]


def test_a_409_naming_a_version_made_only_after_it_answered_is_not_linearizable() -> None:
    assert not check([save(0, 5, 0, current=1), save(10, 20, 0, made=1)]).linearizable


def test_reads_that_disagree_on_the_order_of_two_concurrent_saves_are_not_linearizable() -> None:
    """A sees 2 before B, which starts after A answered, sees 1: version 2 would be current before 1 was."""
    history = [save(0, 100, 0, made=1), save(0, 100, 1, made=2), read(10, 20, 2), read(30, 40, 1)]
    assert not check(history).linearizable


def test_a_read_after_a_save_answered_cannot_see_the_version_before_it() -> None:
    assert not check([save(0, 10, 0, made=1), read(20, 30, 0)]).linearizable


def test_ops_at_one_instant_may_be_ordered_as_needed() -> None:
    assert check([save(5, 5, 0, made=1), read(5, 5, 1), read(5, 5, 0)]).linearizable


def test_a_version_made_twice_or_skipped_or_with_the_wrong_text_is_refused() -> None:
    assert not check([save(0, 10, 0, made=1), save(0, 10, 0, made=1)]).linearizable
    assert not check([save(0, 10, 1, made=2)]).linearizable
    assert not check([save(0, 10, 0, made=1), save(20, 30, 0, current=7)]).linearizable
    wrong_text = Op(1, "read", 20, 30, 1, content="another save's text")
    assert not check([save(0, 10, 0, made=1), wrong_text]).linearizable


def test_a_history_may_start_from_a_version_saved_before_it() -> None:
    history = [read(0, 5, 4), save(10, 20, 4, made=5), save(10, 30, 4, current=5)]
    assert check(history, initial=4, initial_content="v4").linearizable
    assert not check([read(0, 5, 3)], initial=4).linearizable
