"""A branch key per workspace, on the moto server: each workspace's data is encrypted under its own branch key,
a ciphertext opens only in its own workspace's slot, deleting a branch key from the key store shreds that
workspace (and only it), and a warm process encrypts and decrypts with no KMS call.

Calls are counted with a botocore `provide-client-params` handler on the clients the services were built
with (the KMS client and the key store's DynamoDB client), which also sees the encryption context KMS gets:
the template's grants are conditioned on it (`tablename`), so these tests also pin what the code asks of KMS.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from aws_encryption_sdk.internal.formatting.deserialize import deserialize_header

from tests.support import item_bytes
from workspace_memory.adapters.branch_keys import BRANCH_KEY_TTL_SECONDS, KEY_STORE_NAME, branch_key_id
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.policy import Mode
from workspace_memory.document.versions import document_context
from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.turns.admission import credential_context
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.notes import Notebook
from workspace_memory.turns.recall import RecallStatus
from workspace_memory.workspaces.access import ShareType

pytestmark = pytest.mark.integration

HIERARCHY_PROVIDER = "aws-kms-hierarchy"


class Calls:
    """AWS calls of the given clients, with the encryption context of each KMS call."""

    def __init__(self, *clients: Any) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []
        for client in clients:
            client.meta.events.register("provide-client-params.*.*", self._record, unique_id=f"calls-{id(self)}")

    def _record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        context = params.get("EncryptionContext") or params.get("DestinationEncryptionContext") or {}
        self.calls.append((f"{model.service_model.endpoint_prefix}.{model.name}", dict(context)))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def kms(self) -> list[str]:
        return [name for name in self.names() if name.startswith("kms.")]

    def clear(self) -> None:
        self.calls.clear()


def counted(svc: Services) -> Calls:
    return Calls(svc.clients.kms, svc.clients.key_store)


def new_user(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def wrapped_by(ciphertext: bytes) -> set[tuple[str, str]]:
    """(provider, key info) of each encrypted data key in a message header."""
    header, _ = deserialize_header(io.BytesIO(ciphertext), max_encrypted_data_keys=1)
    return {
        (edk.key_provider.provider_id, edk.key_provider.key_info.decode("utf-8", "replace"))
        for edk in header.encrypted_data_keys
    }


def key_store_items(svc: Services, workspace_id: str) -> list[dict[str, Any]]:
    table = svc.settings.key_store_table_name
    found: list[dict[str, Any]] = svc.clients.key_store.query(
        TableName=table,
        KeyConditionExpression="#id = :id",
        ExpressionAttributeNames={"#id": "branch-key-id"},
        ExpressionAttributeValues={":id": {"S": branch_key_id(workspace_id)}},
        ConsistentRead=True,
    )["Items"]
    return found


def shred(svc: Services, workspace_id: str) -> None:
    """What the deletion flow will do: every item of the workspace's branch key leaves the key store."""
    items = key_store_items(svc, workspace_id)
    assert {item["type"]["S"].split(":")[0] for item in items} == {"branch", "beacon"}
    for item in items:
        svc.clients.key_store.delete_item(
            TableName=svc.settings.key_store_table_name,
            Key={"branch-key-id": item["branch-key-id"], "type": item["type"]},
        )
    assert key_store_items(svc, workspace_id) == []


def test_a_workspace_is_created_with_its_branch_key(settings: Settings) -> None:
    """CreateKey asks KMS for wrapped keys only (GenerateDataKeyWithoutPlaintext, ReEncrypt), never Decrypt: the
    workspaces function's grant (template.yaml WorkspacesKeyUse) holds no kms:Decrypt under the key store's
    context. Every CreateKey context names the key store (the grants' condition) and the workspace; the one other
    KMS call seals the workspace's name under its own kind (decisions/0072)."""
    svc = build_services(settings)
    calls = counted(svc)
    ws = svc.access.create_workspace(new_user("owner"), "team", ShareType.SHARED)
    assert sorted(calls.names()) == [
        "dynamodb.TransactWriteItems",
        "kms.GenerateDataKey",
        "kms.GenerateDataKeyWithoutPlaintext",
        "kms.GenerateDataKeyWithoutPlaintext",
        "kms.ReEncrypt",
    ]
    for name, context in calls.calls:
        if name == "kms.GenerateDataKey":
            assert context == {"kind": "workspace-name", "workspace": ws}
        elif name.startswith("kms."):
            assert context["tablename"] == KEY_STORE_NAME
            assert context["aws-crypto-ec:workspace"] == ws
            assert context["branch-key-id"] == branch_key_id(ws)
    meta = svc.table.get(*keys.meta(ws))
    assert meta is not None
    assert meta["branchKeyId"] == branch_key_id(ws)
    types = sorted(":".join(item["type"]["S"].split(":")[:2]) for item in key_store_items(svc, ws))
    assert types == ["beacon:ACTIVE", "branch:ACTIVE", "branch:version"]


def test_every_kind_of_workspace_data_is_under_its_workspaces_branch_key(svc: Services) -> None:
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "team", ShareType.SHARED)
    svc.access.set_ai(owner, ws, True)
    svc.document.save(owner, ws, "# Memory\n- branch keys\n", 0)
    admitted = svc.admission.admit(
        AdmissionRequest(
            conversation_id=f"conv-{uuid.uuid4().hex[:8]}", workspace_id=ws, user_id=owner, idempotency_key="k"
        )
    )
    notebook = Notebook(ws, owner, f"sess-{uuid.uuid4().hex[:8]}")
    svc.notes.update(notebook, "- a working note")

    head = svc.table.get(*keys.head(ws))
    version = svc.table.get(*keys.version(ws, 1))
    admission = svc.table.get(*keys.admission(admitted.admission.id))
    notes = svc.table.get(*keys.notes(ws, owner, notebook.session_id))
    assert head is not None
    assert version is not None
    assert admission is not None
    assert notes is not None
    ciphertexts = {
        "head": head["ciphertext"],
        "version": version["ciphertext"],
        "credential": admission["credentialCiphertext"],
        "notes": notes["ciphertext"],
    }
    for what, ciphertext in ciphertexts.items():
        ((provider, key_info),) = wrapped_by(bytes(ciphertext))
        assert provider == HIERARCHY_PROVIDER, what
        assert key_info == branch_key_id(ws), what
    assert b"branch keys" not in item_bytes(head)
    context = credential_context(ws, admitted.admission.id)
    assert svc.cipher.decrypt(bytes(admission["credentialCiphertext"]), context).decode() == admitted.credential


def test_a_ciphertext_opens_only_in_its_own_workspaces_slot(svc: Services) -> None:
    """A's head copied into B's head slot: refused, and B's process never unwraps A's branch key for it (the
    expected context is checked before any key material is fetched)."""
    owner = new_user("owner")
    ws_a = svc.access.create_workspace(owner, "a", ShareType.SHARED)
    ws_b = svc.access.create_workspace(owner, "b", ShareType.SHARED)
    svc.document.save(owner, ws_a, "alpha secret", 0)
    svc.document.save(owner, ws_b, "bravo text", 0)
    head_a = svc.table.get(*keys.head(ws_a))
    head_b = svc.table.get(*keys.head(ws_b))
    assert head_a is not None
    assert head_b is not None
    svc.table.put({**head_b, "ciphertext": head_a["ciphertext"]})

    cold = build_services(svc.settings)
    calls = counted(cold)
    with pytest.raises(DecryptionFailed) as refused:
        cold.document.read(owner, ws_b)
    assert refused.value.details["fields"] == ["workspace"]
    assert calls.kms() == []  # refused before any branch key was fetched
    # the same ciphertext under its own context still opens: only the slot was wrong
    plaintext = cold.cipher.decrypt(bytes(head_a["ciphertext"]), document_context(ws_a, 1))
    assert b"alpha secret" in plaintext


def test_a_shredded_branch_key_opens_nothing_of_its_workspace_and_only_of_it(svc: Services) -> None:
    owner = new_user("owner")
    doomed = svc.access.create_workspace(owner, "doomed", ShareType.SHARED)
    kept = svc.access.create_workspace(owner, "kept", ShareType.SHARED)
    svc.document.save(owner, doomed, "to be forgotten", 0)
    svc.document.save(owner, kept, "to be kept", 0)
    notebook = Notebook(doomed, owner, f"sess-{uuid.uuid4().hex[:8]}")
    svc.notes.update(notebook, "forgotten notes")
    assert svc.document.read(owner, doomed).content == "to be forgotten"  # warms this process's cache

    shred(svc, doomed)

    cold = build_services(svc.settings)  # a new process: nothing cached
    with pytest.raises(DecryptionFailed):
        cold.document.read(owner, doomed)
    with pytest.raises(DecryptionFailed):
        cold.document.read_version(owner, doomed, 1)
    with pytest.raises(DecryptionFailed):
        cold.notes.get(notebook)
    assert cold.document.read(owner, kept).content == "to be kept"
    # The honest boundary: a warm process keeps a branch key it already holds for at most the cache TTL.
    assert BRANCH_KEY_TTL_SECONDS <= 300
    assert svc.document.read(owner, doomed).content == "to be forgotten"


def test_a_warm_process_encrypts_and_decrypts_with_no_kms_call(svc: Services) -> None:
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "warm", ShareType.SHARED)
    reader = build_services(svc.settings)  # another process: only reads and saves
    calls = counted(reader)

    context: Mapping[str, str] = {"workspace": ws, "kind": "document", "version": "1"}
    first = reader.cipher.encrypt(b"first", context)
    assert reader.cipher.decrypt(first, context) == b"first"
    # cold: the active branch key (to encrypt) and its version (to decrypt), each one read and one unwrap
    assert sorted(calls.names()) == ["dynamodb.GetItem", "dynamodb.GetItem", "kms.Decrypt", "kms.Decrypt"]
    assert all(ctx["tablename"] == KEY_STORE_NAME for name, ctx in calls.calls if name.startswith("kms."))
    calls.clear()

    pairs = 50
    for n in range(pairs):
        text = f"text {n}".encode()
        assert reader.cipher.decrypt(reader.cipher.encrypt(text, context), context) == text
    head = 0
    for n in range(5):
        head = reader.document.save(owner, ws, f"# Memory\n- fact {n}\n", head).version.version
        assert reader.document.read(owner, ws).content == f"# Memory\n- fact {n}\n"
    svc.access.set_ai(owner, ws, True)
    svc.policy.set(owner, ws, Mode.AUTO, 0)
    admitted = reader.admission.admit(
        AdmissionRequest(
            conversation_id=f"conv-{uuid.uuid4().hex[:8]}", workspace_id=ws, user_id=owner, idempotency_key="warm"
        )
    )
    for _ in range(5):
        recalled = reader.recall.recall(ws, admitted.admission.id, admitted.credential)
        assert recalled.status is RecallStatus.OK
    assert calls.kms() == []  # saves, reads, an admission (its credential) and recalls: no KMS call
    assert [name for name in calls.names() if name.startswith("dynamodb.")] == []  # the key store neither
