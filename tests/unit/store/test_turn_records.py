"""The turn records spell the items exactly as stored (docs/data-model.md): every item the turns context
writes reads back into its record and out again unchanged, and an optional attribute left unset is not
stored at all."""

from __future__ import annotations

import pytest

from workspace_memory.kernel.terms import MemoryState, Mode, RecallStatus, Scope
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.turn_records import (
    AdmissionMarker,
    AdmissionRecord,
    CaptureReceipt,
    ConversationOwner,
    CredentialSlot,
    NotesRecord,
    RecallReceiptRecord,
    notes_revision,
)

pytestmark = pytest.mark.unit

ADM = "adm_1.eyJjIjoiYyJ9"
SHA = "ab" * 32
AT = "2027-01-15T08:00:00.000Z"


def admission_item(**extra: object) -> Item:
    return {
        **keys.as_key(keys.admission(ADM)),
        "admissionId": ADM,
        "conversationId": "conv-1",
        "workspaceId": "ws_1",
        "userId": "olivia",
        "mode": "auto",
        "policyRevision": 3,
        "clearGeneration": 1,
        "consentRevision": 2,
        "scopes": ["memory:read", "notes"],
        "nonceHash": SHA,
        "credentialCiphertext": b"sealed credential",
        "expiresAt": 1_800_000_900,
        "status": "admitted",
        "createdAt": AT,
        "ttl": 1_800_087_300,
        **extra,
    }


def test_an_admission_without_its_optionals_reads_back_and_out_unchanged() -> None:
    bare = admission_item()
    record = AdmissionRecord.from_item(bare)
    assert (record.mode, record.scopes) == (Mode.AUTO, frozenset({Scope.MEMORY_READ, Scope.NOTES}))
    assert (record.key_session_id, record.memory_state, record.message_ciphertext, record.capture_receipt) == (
        None,
        None,
        None,
        None,
    )
    assert record.to_item() == bare


def test_an_admission_with_every_optional_reads_back_and_out_unchanged() -> None:
    receipt = {"admissionId": ADM, "version": 4, "ciphertextSha256": SHA, "bytes": 20, "committedAt": AT}
    full = admission_item(
        status="committed",
        keySessionId="ks_1",
        sessionId="s-1",
        memoryState={"state": "saved", "version": 3},
        turnId="turn-1",
        messageCiphertext=b"sealed message",
        captureRequestHash=SHA,
        captureReceipt=receipt,
    )
    record = AdmissionRecord.from_item(full)
    assert record.memory_state == MemoryState(state="saved", version=3)
    assert record.capture_receipt == CaptureReceipt(ADM, 4, SHA, 20, AT)
    assert record.to_item() == full


def test_an_admission_stored_without_scopes_grants_all() -> None:
    item = admission_item()
    del item["scopes"]
    assert AdmissionRecord.from_item(item).scopes == frozenset(Scope)


def test_a_capture_receipt_is_the_map_the_fence_stores() -> None:
    receipt = CaptureReceipt(ADM, 4, SHA, 20, AT)
    assert receipt.to_map() == {
        "admissionId": ADM,
        "version": 4,
        "ciphertextSha256": SHA,
        "bytes": 20,
        "committedAt": AT,
    }
    assert CaptureReceipt.from_map(receipt.to_map()) == receipt


def test_the_admission_claims_read_back_and_out_unchanged() -> None:
    marker = {
        **keys.as_key(keys.admission_key("conv-1", "key-1")),
        "admissionId": ADM,
        "workspaceId": "ws_1",
        "userId": "olivia",
        "ttl": 5,
    }
    read = AdmissionMarker.of(marker)
    assert read is not None
    assert read.to_item("conv-1", "key-1") == marker
    slot = {
        **keys.as_key(keys.credential("conv-1")),
        "admissionId": ADM,
        "nonceHash": SHA,
        "workspaceId": "ws_1",
        "expiresAt": 4,
        "ttl": 5,
    }
    held = CredentialSlot.of(slot)
    assert held is not None
    assert held.to_item("conv-1") == slot
    owner = {
        **keys.as_key(keys.conversation_owner("conv-1")),
        "workspaceId": "ws_1",
        "userId": "olivia",
        "createdAt": AT,
    }
    claimed = ConversationOwner.of(owner)
    assert claimed is not None
    assert claimed.to_item("conv-1") == owner
    assert (AdmissionMarker.of(None), CredentialSlot.of(None), ConversationOwner.of(None)) == (None, None, None)


def test_a_recall_receipt_stores_no_unset_attribute() -> None:
    bare = RecallReceiptRecord(ADM, "ws_1", AT, RecallStatus.NO_ACCESS, 99)
    item = bare.to_item("conv-1", 1_700_000_000_000, "r_1")
    assert item == {
        **keys.as_key(keys.receipt("conv-1", 1_700_000_000_000, ADM, "r_1")),
        "admissionId": ADM,
        "workspaceId": "ws_1",
        "at": AT,
        "status": "no_access",
        "ttl": 99,
    }
    assert RecallReceiptRecord.from_item(item) == bare


def test_a_recall_receipt_with_its_entries_reads_back_and_out_unchanged() -> None:
    full = RecallReceiptRecord(
        ADM, "ws_1", AT, RecallStatus.OK, 99, revision=4, turn_id="turn-1", entries=("en_1@2",), selected=("en_2@1",)
    )
    item = full.to_item("conv-1", 5, "r_1")
    assert (item["revision"], item["turnId"], item["entries"], item["selected"]) == (
        4,
        "turn-1",
        ["en_1@2"],
        ["en_2@1"],
    )
    assert RecallReceiptRecord.from_item(item) == full


def test_notes_read_back_and_out_unchanged_and_judge_their_ttl() -> None:
    record = NotesRecord("ws_1", b"sealed", SHA, 12, 3, AT, 100)
    item = record.to_item("olivia", "s-1")
    assert item == {
        **keys.as_key(keys.notes("ws_1", "olivia", "s-1")),
        "workspaceId": "ws_1",
        "ciphertext": b"sealed",
        "sha256": SHA,
        "bytes": 12,
        "revision": 3,
        "updatedAt": AT,
        "ttl": 100,
    }
    assert NotesRecord.of(item) == record
    assert (record.expired(99), record.expired(100)) == (False, True)
    assert (notes_revision(item), notes_revision(None), NotesRecord.of(None)) == (3, 0, None)


def test_notes_without_a_ttl_store_none_and_never_expire() -> None:
    record = NotesRecord("ws_1", b"sealed", SHA, 12, 1, None, None)
    item = record.to_item("olivia", "s-1")
    assert "ttl" not in item
    assert "updatedAt" not in item
    assert NotesRecord.of(item) == record
    assert not record.expired(10**12)
