"""A key session's binding as pure logic (workspaces/key_binding.py, decisions/0077): what it accepts when the
session is opened, what it admits, that combining bindings only narrows, and that its prefixes are sealed to their
session."""

from __future__ import annotations

import itertools

import pytest

from tests.unit.fakes import FakeCipher
from workspace_memory.kernel.errors import DecryptionFailed, InvalidKeySessionBinding, OutsideKeySessionBinding
from workspace_memory.kernel.terms import EntryScope, EntryType
from workspace_memory.workspaces.key_binding import (
    MAX_KEY_PREFIX_CHARS,
    KeyBinding,
    binding_context,
    open_prefixes,
    seal_prefixes,
)

pytestmark = pytest.mark.unit

W, M, A = EntryScope.WORKSPACE, EntryScope.MEMBER, EntryScope.AGENT
FACT, RULE = EntryType.FACT, EntryType.RULE


@pytest.mark.parametrize(
    ("scopes", "types", "prefixes"),
    [
        (None, None, None),  # a bind naming nothing
        ([], None, None),
        (None, [], None),
        (None, None, []),
        (None, None, ["ops/", "a/", "b/", "c/", "d/"]),  # five prefixes
        (None, None, ["Ops/"]),  # not the key alphabet
        (None, None, ["/ops"]),
        (None, None, ["ops/a b"]),
        (None, None, [""]),
        (None, None, ["ops/" + "x" * MAX_KEY_PREFIX_CHARS]),
        (None, None, ["ops/4111111111111111"]),  # a card number: personal data is refused, never sealed
    ],
)
def test_a_bad_binding_is_refused_with_one_code(
    scopes: list[EntryScope] | None, types: list[EntryType] | None, prefixes: list[str] | None
) -> None:
    with pytest.raises(InvalidKeySessionBinding) as refused:
        KeyBinding.of(scopes, types, prefixes)
    assert refused.value.code == "INVALID_KEY_SESSION_BINDING"
    for prefix in prefixes or []:
        if len(prefix) > 3:
            assert prefix not in refused.value.message  # the message names a position, never the prefix


def test_prefixes_are_deduplicated_and_a_covered_one_adds_nothing() -> None:
    binding = KeyBinding.of(key_prefixes=["ops/db", "ops/", "team/x", "team/xy"])
    assert binding.key_prefixes == ("ops/", "team/x")
    assert KeyBinding.of(scopes=[W, W]).scopes == frozenset({W})


def test_a_key_under_a_prefix_is_inside_and_no_key_is_outside() -> None:
    binding = KeyBinding.of(key_prefixes=["ops/", "team/on"])
    assert binding.admits(W, FACT, "ops/deploy-day")
    assert binding.admits(W, FACT, "team/oncall")
    assert not binding.admits(W, FACT, "team/offsite")
    assert not binding.admits(W, FACT, "opsx/deploy")
    assert not binding.admits(W, FACT, None)  # an entry without a key is outside a prefix binding
    assert binding.needs_key
    assert not KeyBinding.of(scopes=[W]).needs_key


def test_scopes_and_types_bind_what_they_name_and_nothing_else() -> None:
    binding = KeyBinding.of(scopes=[M], types=[FACT, RULE])
    assert binding.admits(M, FACT, None)
    assert not binding.admits(W, FACT, None)
    assert not binding.admits(M, EntryType.PREFERENCE, "ops/x")
    assert not binding.admits_kind(M, None)  # a forgotten chain has no type: outside a type binding
    assert KeyBinding.of(scopes=[M]).admits_kind(M, None)


@pytest.mark.parametrize(
    ("scope", "entry_type", "key", "field"),
    [(W, FACT, "ops/a", "scope"), (M, RULE, "ops/a", "type"), (M, FACT, "hr/a", "key prefix"), (M, FACT, None, "key")],
)
def test_a_write_outside_is_refused_naming_the_field(
    scope: EntryScope, entry_type: EntryType, key: str | None, field: str
) -> None:
    binding = KeyBinding.of([M], [FACT], ["ops/"])
    with pytest.raises(OutsideKeySessionBinding) as refused:
        binding.require(scope, entry_type, key)
    assert refused.value.code == "OUTSIDE_KEY_SESSION_BINDING"
    assert field in refused.value.message
    assert key is None or key not in refused.value.message
    binding.require(M, FACT, "ops/a")  # inside: no refusal


CASES = [
    (scope, entry_type, key)
    for scope, entry_type, key in itertools.product(EntryScope, EntryType, [None, "ops/a", "ops/dba", "hr/a", "team/x"])
]
BINDINGS = [
    KeyBinding.of(scopes=[W, M]),
    KeyBinding.of(types=[FACT]),
    KeyBinding.of(key_prefixes=["ops/"]),
    KeyBinding.of(key_prefixes=["ops/db", "hr/"]),
    KeyBinding.of([A], [RULE, FACT], ["team/", "ops/"]),
]


@pytest.mark.parametrize(("first", "second"), itertools.product(BINDINGS, BINDINGS))
def test_a_binding_combined_with_another_only_narrows(first: KeyBinding, second: KeyBinding) -> None:
    both = first.narrowed(second)
    for case in CASES:
        assert both.admits(*case) == (first.admits(*case) and second.admits(*case)), case
    assert first.narrowed(None) == first


def test_the_prefixes_are_sealed_to_their_workspace_and_session() -> None:
    cipher = FakeCipher()
    sealed = seal_prefixes(cipher, "ws1", "ks_1", ("clients/acme/",))
    assert b"clients/acme/" not in sealed
    assert cipher.contexts == [binding_context("ws1", "ks_1")]
    assert open_prefixes(cipher, "ws1", "ks_1", sealed) == ("clients/acme/",)
    with pytest.raises(DecryptionFailed):  # copied onto another session, it does not open there
        open_prefixes(cipher, "ws1", "ks_2", sealed)
