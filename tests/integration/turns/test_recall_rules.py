"""Rules recalled with the constitution (docs/architecture.md#rules): their own block and byte budget, before the index,
counted in the receipt; real moto server and real encryption."""

from __future__ import annotations

import pytest

from tests.integration.adapters.test_branch_keys import Calls
from tests.integration.fence_support import DOC, make_scene
from workspace_memory.document.versions import utf8_size
from workspace_memory.entries.index import INDEX_HEADING, RULES_HEADING, RULES_MAX_BYTES
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryType, Outcome
from workspace_memory.turns.recall import CLOSE_MARKER, RecallStatus

pytestmark = pytest.mark.integration

MESSAGE = "From now on: always answer in British English. Please!"


def test_a_rule_saved_with_a_quote_is_recalled_before_the_index_and_in_the_receipt(settings: Settings) -> None:
    scene = make_scene(settings)
    svc = scene.svc
    fact = svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, EntryText("Deploys", "Fridays", "")))
    admitted = scene.admit(message=MESSAGE)
    adm = admitted.admission
    rule = EntryText("British English", "Always answer in British English", "always answer in\nBritish English.")
    body = {"type": "rule", "title": rule.title, "quote": "always answer in British English"}
    saved = svc.agent_entries.save(
        scene.ws, adm.id, admitted.credential, Draft(EntryType.RULE, rule), body["quote"], body, "rule-1"
    )
    assert saved.outcome is Outcome.COMMITTED

    svc.recall.recall(scene.ws, adm.id, admitted.credential)  # warms the branch key and the lines
    calls = Calls(svc.clients.kms, svc.clients.key_store)
    result = svc.recall.recall(scene.ws, adm.id, admitted.credential)
    assert result.status is RecallStatus.OK
    block = result.block
    rule_line = (
        f"- British English — Always answer in British English [{saved.entry_id}]\n  always answer in British English."
    )
    assert rule_line in block
    assert block.index(DOC.strip()) < block.index(RULES_HEADING) < block.index(INDEX_HEADING)
    assert f"- Deploys — Fridays [{fact.entry_id}]" in block
    assert block.count(f"[{saved.entry_id}]") == 1  # shown as a rule, not again in the index
    assert block.endswith(CLOSE_MARKER)
    assert calls.kms() == []  # warm: no KMS call (the lines are cached per entry revision)
    assert set(result.entries) == {(saved.entry_id, 1), (fact.entry_id, 1)}
    receipt = svc.recall.receipts(scene.owner, adm.conversation_id, 10, None).receipts[-1]
    assert set(receipt.entries) == {f"{saved.entry_id}@1", f"{fact.entry_id}@1"}


def test_rules_beyond_their_budget_are_counted_as_left_out_and_stay_in_the_index(settings: Settings) -> None:
    scene = make_scene(settings)
    svc = scene.svc
    body = "x" * 500  # each rule's lines take ~540 bytes: three fit in the 2,000-byte budget
    rules = [
        svc.entries.create(scene.owner, scene.ws, Draft(EntryType.RULE, EntryText(f"Rule {n}", f"rule {n}", body)))
        for n in range(5)
    ]
    admitted = scene.admit()
    result = svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)
    block = result.block

    rules_part = block[block.index(RULES_HEADING) : block.index(INDEX_HEADING)]
    assert utf8_size(rules_part) <= RULES_MAX_BYTES
    shown = [r for r in rules if f"[{r.entry_id}]\n  {body}" in rules_part]
    assert len(shown) == 3  # in entry id order (stable from recall to recall), as the index is
    assert "2 more rules not shown (over the rules budget); the index lists them." in rules_part
    index_part = block[block.index(INDEX_HEADING) :]
    left_out = [r for r in rules if r not in shown]
    assert all(f"[{r.entry_id}]" not in rules_part and f"[{r.entry_id}]" in index_part for r in left_out)
    assert all(f"[{r.entry_id}]" not in index_part for r in shown)
    assert {e for e, _ in result.entries} == {r.entry_id for r in rules}
