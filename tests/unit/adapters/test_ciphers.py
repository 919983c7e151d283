"""Which key protects what (the routed cipher), how a refused decrypt is reported, and the key store port in
memory: pure logic, no sockets (the keyring itself runs against moto in
tests/integration/adapters/test_branch_keys.py)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from aws_cryptographic_material_providers.keystore import errors as keystore_errors
from aws_cryptographic_material_providers.mpl import errors as mpl_errors
from aws_encryption_sdk.exceptions import AWSEncryptionSDKClientError
from botocore.exceptions import EndpointConnectionError

from tests.memory_table import MemoryKeyStore, MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.adapters.branch_keys import branch_key_id, rejection
from workspace_memory.adapters.routed_cipher import SERVICE_KINDS, RoutedCipher
from workspace_memory.adapters.temporal_codec import PAYLOAD_CONTEXT
from workspace_memory.document.versions import document_context
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.kernel.errors import DecryptionFailed, Unavailable
from workspace_memory.store import keys
from workspace_memory.turns.admission import credential_context
from workspace_memory.turns.notes import Notebook, notes_context
from workspace_memory.workspaces.access import AccessService, ShareType
from workspace_memory.workspaces.workspace_names import NAME_KIND, name_context

pytestmark = pytest.mark.unit


class Tagging:
    def __init__(self, tag: bytes) -> None:
        self.tag = tag

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        return self.tag + plaintext

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        return ciphertext.removeprefix(self.tag)


@pytest.fixture
def routed() -> RoutedCipher:
    return RoutedCipher(Tagging(b"ws:"), Tagging(b"svc:"))


@pytest.mark.parametrize(
    "context",
    [
        document_context("ws-1", 3),
        notes_context(Notebook("ws-1", "alice", "s"), 2),
        credential_context("ws-1", "adm-1"),
    ],
    ids=["document", "notes", "credential"],
)
def test_workspace_data_goes_to_the_branch_key(routed: RoutedCipher, context: dict[str, str]) -> None:
    assert routed.encrypt(b"x", context) == b"ws:x"
    assert routed.decrypt(b"ws:x", context) == b"x"


def test_payloads_go_to_the_kms_key(routed: RoutedCipher) -> None:
    assert PAYLOAD_CONTEXT["kind"] in SERVICE_KINDS
    assert routed.encrypt(b"x", PAYLOAD_CONTEXT) == b"svc:x"


@pytest.mark.parametrize("context", [{"kind": "document", "version": "1"}, {}, {"workspace": "", "kind": "notes"}])
def test_a_context_naming_neither_is_refused(routed: RoutedCipher, context: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="workspace"):
        routed.encrypt(b"x", context)
    with pytest.raises(ValueError, match="workspace"):
        routed.decrypt(b"x", context)


def test_a_workspace_naming_a_service_kind_is_still_workspace_data(routed: RoutedCipher) -> None:
    """A payload ciphertext read as workspace data goes to the branch key, where it cannot open."""
    assert routed.route({"workspace": "w", "kind": "temporal-payload"}) is routed.workspace


def test_a_workspace_name_goes_to_the_kms_key_though_it_names_its_workspace(routed: RoutedCipher) -> None:
    """The function that names workspaces holds no branch key (decision 0072)."""
    assert routed.route(name_context("w")) is routed.service
    assert NAME_KIND in SERVICE_KINDS


def test_branch_key_ids_are_derived_from_the_workspace() -> None:
    assert branch_key_id("ws_abc") == "workspace/ws_abc"
    with pytest.raises(ValueError, match="workspace"):
        branch_key_id("")


def _wrapped(error: Exception) -> AWSEncryptionSDKClientError:
    """As aws-encryption-sdk raises an error of the Material Providers Library on decrypt."""
    return AWSEncryptionSDKClientError(mpl_errors.CollectionOfErrors(message="no key could decrypt", list=[error]))


def test_a_missing_branch_key_is_a_decryption_failure() -> None:
    shredded = _wrapped(mpl_errors.KeyStore(keystore_errors.KeyStoreException(message="No item found")))
    assert type(rejection(shredded)) is DecryptionFailed
    mismatch = AWSEncryptionSDKClientError(mpl_errors.AwsCryptographicMaterialProvidersException(message="EC"))
    assert type(rejection(mismatch)) is DecryptionFailed


@pytest.mark.parametrize(
    "failure",
    [
        mpl_errors.ComAmazonawsKms("ThrottlingException"),
        mpl_errors.KeyStore(keystore_errors.ComAmazonawsDynamodb("ProvisionedThroughputExceeded")),
        mpl_errors.OpaqueError(obj=EndpointConnectionError(endpoint_url="http://kms")),
    ],
    ids=["kms", "key-store", "transport"],
)
def test_a_kms_or_key_store_failure_is_unavailable_not_a_bad_ciphertext(failure: Exception) -> None:
    reported = rejection(_wrapped(failure))
    assert type(reported) is Unavailable


def test_a_workspace_is_created_with_its_branch_key_first() -> None:
    table, store = MemoryTable(), MemoryKeyStore()
    cipher = FakeCipher(store)
    access = AccessService(table, ManualClock(), store, cipher)
    ws = access.create_workspace("olivia", "team", ShareType.SHARED)
    meta = table.get(*keys.meta(ws))
    assert meta is not None
    assert meta["branchKeyId"] == store.branch_keys[ws]
    assert "team" not in repr(meta)  # the name is sealed, under its own service kind and its workspace
    assert cipher.contexts == [{"kind": "workspace-name", "workspace": ws}]
    with pytest.raises(Unavailable):  # a branch key is created once; the real store's condition refuses too
        store.create_branch_key(ws)


def test_no_workspace_data_without_its_branch_key() -> None:
    store = MemoryKeyStore()
    cipher = FakeCipher(store)
    with pytest.raises(Unavailable):
        cipher.encrypt(b"x", document_context("ws-without-key", 1))
    store.create_branch_key("ws-with-key")
    assert cipher.decrypt(cipher.encrypt(b"x", document_context("ws-with-key", 1)), document_context("ws-with-key", 1))
