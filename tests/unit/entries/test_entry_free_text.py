"""Free text an entry writer sends is sealed or refused, never an attribute in clear (decisions/0055): the
supersession reason, source refs, the agent name. Over the in-memory table."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, draft, make, snapshot
from workspace_memory.entries.model import Draft, EntryText, Source
from workspace_memory.entries.validation import redacted, redaction_warnings
from workspace_memory.kernel.errors import InvalidAgentName, InvalidSourceRef
from workspace_memory.kernel.terms import CitationKind, EntryScope, EntryType, RedactionKind
from workspace_memory.store import attribute_forms, attributes
from workspace_memory.store.ports import Item

pytestmark = pytest.mark.unit

EMAIL = "jane.doe@example.com"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SHA = "0" * 64


def _strings(item: Item) -> str:
    return " ".join(str(v) for v in item.values() if not isinstance(v, bytes | bytearray))


def test_a_reason_is_sealed_in_the_successor_and_served_from_it() -> None:
    w = make()
    first = w.entries.create(OWNER, w.ws, draft(scope=EntryScope.MEMBER))
    w.clock.advance(10)
    written = w.entries.supersede(OWNER, w.ws, first.entry_id, draft("v2", reason=f"mail {EMAIL}"), 1)
    assert [f.kind for f in written.warnings] == [RedactionKind.EMAIL]  # a human's: stored as typed, warned
    assert all(EMAIL not in _strings(item) for item in w.table.items.values())
    rows = w.entries.history(OWNER, w.ws, first.entry_id, 10, None).rows
    assert rows[1].superseded_reason == f"mail {EMAIL}"
    assert w.entries.read(OWNER, w.ws, first.entry_id, as_of=w.clock.now() - 5).superseded_reason == f"mail {EMAIL}"
    assert rows[0].superseded_reason is None


def test_an_agents_reason_is_redacted() -> None:
    stored, _ = redacted(draft(reason=f"ask {EMAIL}"))
    assert stored.reason is not None
    assert EMAIL not in stored.reason
    assert "[redacted:email]" in stored.reason


@pytest.mark.parametrize(
    ("kind", "ref"),
    [
        (CitationKind.ENTRY, GITHUB_TOKEN),
        (CitationKind.ENTRY, EMAIL),
        (CitationKind.ENTRY, "+1 415 555 0100"),
        (CitationKind.DOCUMENT_VERSION, "v1"),
        (CitationKind.DOCUMENT_VERSION, "en_" + "a" * 24),
    ],
)
def test_a_ref_that_is_not_the_id_its_kind_cites_is_refused(kind: CitationKind, ref: str) -> None:
    w = make()
    before = snapshot(w)
    with pytest.raises(InvalidSourceRef) as refused:
        w.entries.create(EDITOR, w.ws, draft(sources=(Source(kind, ref, SHA),)))
    assert ref not in str(refused.value)
    assert snapshot(w) == before


def test_refs_of_the_declared_formats_are_kept() -> None:
    w = make()
    cited = w.entries.create(EDITOR, w.ws, draft())
    sources = (Source(CitationKind.ENTRY, cited.entry_id, SHA), Source(CitationKind.DOCUMENT_VERSION, "1", SHA))
    written = w.entries.create(EDITOR, w.ws, draft(sources=sources))
    assert w.entries.read(VIEWER, w.ws, written.entry_id).text.sources == sources


def agent_draft(agent: str) -> Draft:
    return Draft(EntryType.FACT, EntryText("Deploys", "deploy day", "Fridays"), EntryScope.AGENT, agent)


@pytest.mark.parametrize("agent", [AWS_KEY_ID, "Planner", "jane.doe@example.com", "a" * 65, "-lead", "x y"])
def test_an_agent_name_that_is_no_lower_case_id_is_refused(agent: str) -> None:
    w = make()
    before = snapshot(w)
    with pytest.raises(InvalidAgentName) as refused:
        w.entries.create(EDITOR, w.ws, agent_draft(agent))
    assert agent not in str(refused.value)
    assert snapshot(w) == before


def test_an_agent_name_redaction_flags_is_refused() -> None:
    token = GITHUB_TOKEN.lower()
    assert attribute_forms.AGENT_NAME.fullmatch(token)
    with pytest.raises(InvalidAgentName):
        make().entries.create(EDITOR, make().ws, agent_draft(token))


def test_a_human_locator_is_warned_about() -> None:
    source = Source(CitationKind.DOCUMENT_VERSION, "1", SHA, f"line with {EMAIL}")
    assert [f.kind for f in redaction_warnings(draft(sources=(source,)))] == [RedactionKind.EMAIL]


def test_every_item_the_entries_write_is_of_its_declared_classes() -> None:
    """The unit version of the classification scan: every item kind the entry flows make, judged by
    `store/attributes` (the integration test drives the whole stack)."""
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft(key="ops/deploys"))
    w.entries.create(EDITOR, w.ws, agent_draft("planner"))
    w.entries.create(OWNER, w.ws, draft("mine", scope=EntryScope.MEMBER))
    w.clock.advance(10)
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft("v2", reason=f"moved {EMAIL}"), 1)
    w.entries.read(VIEWER, w.ws, first.entry_id)
    gone = w.entries.create(EDITOR, w.ws, draft("gone"))
    w.entries.forget(OWNER, w.ws, gone.entry_id)
    found = [v for item in w.table.items.values() for v in attributes.violations(item)]
    assert found == []
    kinds = {k.name for item in w.table.items.values() if (k := attributes.kind_of(item["pk"], item["sk"]))}
    assert {"entry", "entry-revision", "entry-key", "entry-counter", "entry-key-secret", "workspace"} <= kinds
