"""A search's mask (visibility and filters as vector comparisons over the index's columns) admits exactly the
revisions the per-document rule admits: a member's private entries only to her, the current revisions or
those valid at `asOf` (a revision replaced at exactly that moment no longer is), and each filter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from workspace_memory.kernel.terms import EntryScope, EntryType, Role
from workspace_memory.search.columns import Columns
from workspace_memory.search.engine import SearchDoc
from workspace_memory.search.entry_search import SearchFilters, admitted
from workspace_memory.workspaces.access import Caller, ShareType, Workspace

pytestmark = pytest.mark.unit

USERS = ("u1", "u2", "u3")


def _end(start: float, length: float | None) -> float | None:
    return None if length is None else start + length


TIMES = st.sampled_from([0.0, 10.0, 20.0, 30.0])
DOC = st.builds(
    lambda n, scope, owner, kind, key, start, length: SearchDoc(
        f"en_{n}", 1, scope.value, owner, kind.value, key, "t", "s", "b", start, _end(start, length)
    ),
    st.integers(0, 8),
    st.sampled_from(EntryScope),
    st.sampled_from(USERS),
    st.sampled_from(EntryType),
    st.sampled_from([None, "deploy/window", "deploy/freeze", "billing/currency"]),
    TIMES,
    st.sampled_from([None, 0.0, 10.0, 20.0]),
)
FILTERS = st.builds(
    SearchFilters,
    scope=st.none() | st.sampled_from(EntryScope),
    type=st.none() | st.sampled_from(EntryType),
    key_prefix=st.none() | st.sampled_from(["deploy/", "deploy/fr", "billing/"]),
    as_of=st.none() | TIMES,
    exclude=st.frozensets(st.sampled_from([f"en_{n}" for n in range(9)]), max_size=3),
)


def reference(doc: SearchDoc, caller: Caller, filters: SearchFilters) -> bool:
    """The rule as one document at a time (what the mask replaced)."""
    if doc.scope == EntryScope.MEMBER.value and doc.owner != caller.user_id:
        return False
    if doc.entry_id in filters.exclude:
        return False
    if filters.scope is not None and doc.scope != filters.scope.value:
        return False
    if filters.type is not None and doc.type != filters.type.value:
        return False
    if filters.key_prefix is not None and not (doc.key or "").startswith(filters.key_prefix):
        return False
    if filters.as_of is None:
        return doc.valid_to is None
    return doc.valid_from <= filters.as_of and (doc.valid_to is None or filters.as_of < doc.valid_to)


@settings(max_examples=examples(100), deadline=None)
@given(docs=st.lists(DOC, max_size=12), user=st.sampled_from(USERS), filters=FILTERS)
def test_the_mask_admits_what_the_rule_admits(docs: list[SearchDoc], user: str, filters: SearchFilters) -> None:
    caller = Caller(user, Role.EDITOR, Workspace("ws_1", "u1", ShareType.SHARED, True, 1))
    mask = admitted(Columns.of(docs), caller, filters)
    assert [bool(m) for m in mask] == [reference(d, caller, filters) for d in docs]


def test_a_revision_replaced_at_as_of_is_not_valid_then() -> None:
    old = SearchDoc("en_1", 1, "workspace", "u1", "fact", None, "t", "s", "b", 0.0, 10.0)
    new = SearchDoc("en_1", 2, "workspace", "u1", "fact", None, "t", "s", "b", 10.0, None)
    assert list(Columns.of([old, new]).valid_at(10.0)) == [False, True]
