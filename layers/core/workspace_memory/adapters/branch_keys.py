"""A branch key per workspace: the hierarchical keyring of the AWS Cryptographic Material Providers Library.

Every workspace has its own branch key in the key store (a DynamoDB table of its own, `BranchKeyTable` in
template.yaml), created with the workspace and wrapped by the KMS key. Documents, versions, notes and
admission credentials are encrypted under their workspace's branch key: each message still gets a fresh
data key, wrapped with a key derived from the branch key (no KMS call), and the branch key's material is
cached in the process for `BRANCH_KEY_TTL_SECONDS`. So a warm process encrypts and decrypts with no KMS
call, and deleting a workspace's branch key from the key store makes all of its ciphertexts undecryptable
(crypto-shredding; a warm process keeps its cached copy for at most the TTL).

Branch key id. Chosen by us and derived from the workspace id (`branch_key_id`), so the branch-key-id
supplier maps the encryption context's `workspace` to it without a read; the id is also stored on the
workspace's META item (`branchKeyId`), for audit and for the deletion flow. The branch key carries the
custom encryption context `{"workspace": <id>}`, so every KMS call that wraps or unwraps it names the
workspace in CloudTrail (`aws-crypto-ec:workspace`).

KMS sees the MPL's own encryption context on branch keys (`branch-key-id`, `type`, `create-time`,
`tablename`, `kms-arn`, `hierarchy-version`, `aws-crypto-ec:workspace`), never our per-object `kind`:
`tablename` is `KEY_STORE_NAME`, the key policy's condition on branch-key use (template.yaml).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from aws_cryptographic_material_providers.keystore import KeyStore
from aws_cryptographic_material_providers.keystore import errors as keystore_errors
from aws_cryptographic_material_providers.keystore.config import KeyStoreConfig
from aws_cryptographic_material_providers.keystore.models import CreateKeyInput, KMSConfigurationKmsKeyArn
from aws_cryptographic_material_providers.mpl import AwsCryptographicMaterialProviders
from aws_cryptographic_material_providers.mpl import errors as mpl_errors
from aws_cryptographic_material_providers.mpl.config import MaterialProvidersConfig
from aws_cryptographic_material_providers.mpl.models import (
    CacheTypeDefault,
    CreateAwsKmsHierarchicalKeyringInput,
    CreateDefaultCryptographicMaterialsManagerInput,
    DefaultCache,
    GetBranchKeyIdInput,
    GetBranchKeyIdOutput,
)
from aws_cryptographic_material_providers.mpl.references import IBranchKeyIdSupplier
from aws_encryption_sdk.exceptions import AWSEncryptionSDKClientError
from botocore.exceptions import BotoCoreError, ClientError

from workspace_memory.adapters.kms_cipher import EnvelopeCipher
from workspace_memory.kernel.errors import DecryptionFailed, DomainError, Unavailable

KEY_STORE_NAME = "workspace-memory-branch-keys"
"""The key store's logical name: bound into every branch key's wrapping (KMS context `tablename`), so it must
never change, whatever the physical table is called (a restore to a new table keeps working)."""

BRANCH_KEY_TTL_SECONDS = 300
"""How long a process reuses a branch key's material before it reads the key store and calls KMS again: the
bound on KMS calls (at most one per workspace, branch key version and process per window) and the window in
which a warm process can still use a branch key after it was deleted or its KMS access revoked."""

BRANCH_KEY_CACHE_ENTRIES = 1000
"""Cached branch key materials per process: a workspace takes two (its active key for encrypting, its
version for decrypting), so a warm process keeps 500 workspaces without KMS calls; beyond, the least
recently used are evicted and cost one KMS call again."""

_MPL_ERRORS: tuple[type[Exception], ...] = (mpl_errors.ServiceError, keystore_errors.ServiceError)
_CREATE_ERRORS: tuple[type[Exception], ...] = (ClientError, BotoCoreError, *_MPL_ERRORS)
_SERVICE_FAILURES = frozenset({"ComAmazonawsKms", "ComAmazonawsDynamodb"})


def branch_key_id(workspace_id: str) -> str:
    """The branch key of a workspace: derived, not looked up (see the module docstring)."""
    if not workspace_id:
        raise ValueError("a branch key belongs to a workspace")
    return f"workspace/{workspace_id}"


def key_store(ddb_client: Any, kms_client: Any, table_name: str, kms_key_arn: str) -> Any:
    """The MPL key store on `table_name`, branch keys wrapped by `kms_key_arn` (a full key ARN).

    `ddb_client` must be a plain DynamoDB client (DynamoDB JSON), not a resource's client."""
    return KeyStore(
        KeyStoreConfig(
            ddb_table_name=table_name,
            kms_configuration=KMSConfigurationKmsKeyArn(kms_key_arn),
            logical_key_store_name=KEY_STORE_NAME,
            ddb_client=ddb_client,
            kms_client=kms_client,
        )
    )


class BranchKeyStore:
    """Implements `ports.KeyStore`: creates a workspace's branch key (kms:GenerateDataKeyWithoutPlaintext and
    kms:ReEncrypt*, then one conditional TransactWriteItems; the caller never sees key material), and destroys
    it: the library has no delete, so its items are queried on `branch-key-id` and deleted one by one.

    `ddb_client` and `table_name` are the key store's own (a plain DynamoDB client), needed to destroy only."""

    def __init__(self, store: Any, ddb_client: Any = None, table_name: str | None = None) -> None:
        self._store = store
        self._ddb = ddb_client
        self._table_name = table_name

    def destroy_branch_key(self, workspace_id: str) -> int:
        if self._ddb is None or self._table_name is None:
            raise ValueError("this key store was built without its table: it cannot destroy a branch key")
        deleted = 0
        try:
            while True:  # every version of the key, the active one and the beacon key; a page at a time
                out = self._ddb.query(
                    TableName=self._table_name,
                    KeyConditionExpression="#id = :id",
                    ExpressionAttributeNames={"#id": "branch-key-id", "#type": "type"},
                    ExpressionAttributeValues={":id": {"S": branch_key_id(workspace_id)}},
                    ProjectionExpression="#id, #type",
                    ConsistentRead=True,
                )
                items = out.get("Items", [])
                if not items:
                    return deleted
                for item in items:
                    self._ddb.delete_item(TableName=self._table_name, Key=item)
                    deleted += 1
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable(f"branch key not destroyed ({type(exc).__name__})", transient=True) from exc

    def create_branch_key(self, workspace_id: str) -> str:
        try:
            created = self._store.create_key(
                CreateKeyInput(
                    branch_key_identifier=branch_key_id(workspace_id), encryption_context={"workspace": workspace_id}
                )
            )
        except _CREATE_ERRORS as exc:
            raise Unavailable(f"branch key not created ({type(exc).__name__})", transient=True) from exc
        identifier: str = created.branch_key_identifier
        return identifier


class WorkspaceBranchKeys(IBranchKeyIdSupplier):  # type: ignore[misc]
    """The branch-key-id supplier: the encryption context's `workspace` names the branch key.

    On decrypt the context is the message's own (checked against the expected one before this runs)."""

    def get_branch_key_id(self, param: GetBranchKeyIdInput) -> GetBranchKeyIdOutput:
        workspace = param.encryption_context.get("workspace")
        if not workspace:
            raise ValueError("the encryption context names no workspace")
        return GetBranchKeyIdOutput(branch_key_id=branch_key_id(workspace))


class BranchKeyCipher(EnvelopeCipher):
    """Implements `ports.Cipher` for workspace data: the hierarchical keyring with `WorkspaceBranchKeys`.

    Every context must name its `workspace`. A refused decrypt is `DecryptionFailed` (a moved ciphertext, a
    context mismatch, a branch key that no longer exists), except when KMS or the key store failed to answer:
    that is `Unavailable`, as for a store outage."""

    encrypt_errors: ClassVar[tuple[type[Exception], ...]] = (*EnvelopeCipher.encrypt_errors, *_MPL_ERRORS)
    decrypt_rejections: ClassVar[tuple[type[Exception], ...]] = (AWSEncryptionSDKClientError, *_MPL_ERRORS)

    def __init__(
        self,
        store: Any,
        *,
        ttl_seconds: int = BRANCH_KEY_TTL_SECONDS,
        cache_entries: int = BRANCH_KEY_CACHE_ENTRIES,
    ) -> None:
        providers = AwsCryptographicMaterialProviders(MaterialProvidersConfig())
        keyring = providers.create_aws_kms_hierarchical_keyring(
            CreateAwsKmsHierarchicalKeyringInput(
                key_store=store,
                branch_key_id_supplier=WorkspaceBranchKeys(),
                ttl_seconds=ttl_seconds,
                cache=CacheTypeDefault(DefaultCache(entry_capacity=cache_entries)),
            )
        )
        # One materials manager for the process (the SDK would build one per call from a bare keyring).
        manager = providers.create_default_cryptographic_materials_manager(
            CreateDefaultCryptographicMaterialsManagerInput(keyring=keyring)
        )
        super().__init__({"materials_manager": manager}, reproduce_context=True)

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        _require_workspace(context)
        return super().encrypt(plaintext, context)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        _require_workspace(context)
        return super().decrypt(ciphertext, context)

    def rejected(self, exc: Exception) -> DomainError:
        return rejection(exc)


def rejection(exc: Exception) -> DomainError:
    """A refused decrypt: `Unavailable` if KMS or the key store failed somewhere inside (throttled, denied,
    unreachable), else `DecryptionFailed` (a moved or altered ciphertext, a branch key that no longer exists)."""
    if any(_is_service_failure(cause) for cause in _causes(exc)):
        return Unavailable(f"decryption failed ({type(exc).__name__}: key store or KMS)", transient=True)
    return DecryptionFailed(f"ciphertext rejected ({type(exc).__name__})")


def _require_workspace(context: Mapping[str, str]) -> None:
    if not context.get("workspace"):
        raise ValueError("workspace data is encrypted under its workspace's branch key: name the workspace")


def _is_service_failure(error: object) -> bool:
    return isinstance(error, (ClientError, BotoCoreError)) or type(error).__name__ in _SERVICE_FAILURES


def _causes(error: object, depth: int = 0) -> Iterator[object]:
    """`error` and what it wraps: the SDK wraps an MPL error, which may hold a list of errors (one per
    encrypted data key tried) or wrap a key store error or a botocore error."""
    yield error
    if depth > 8:
        return
    nested: list[object] = []
    if isinstance(error, AWSEncryptionSDKClientError):
        nested.extend(error.args[:1])
    nested.extend(getattr(error, "list", None) or [])
    nested.extend(value for value in (getattr(error, "message", None), getattr(error, "obj", None)) if value)
    nested.append(getattr(error, "__cause__", None))
    for inner in nested:
        if isinstance(inner, BaseException) and inner is not error:
            yield from _causes(inner, depth + 1)
