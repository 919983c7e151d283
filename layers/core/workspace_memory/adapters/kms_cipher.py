"""aws-encryption-sdk envelope encryption: the message format and checks both of the service's ciphers share,
and `KmsCipher`, the one that wraps each data key with the KMS key itself (Temporal payloads).

Suite: AES-256-GCM with HKDF-SHA512 and key commitment, *without* signatures: the service is both the
only writer and the only reader, so a signature would prove nothing a committed key does not, and it
would cost an ECDSA verification on every recall. The SDK does not check the encryption context on
decrypt, so we do: a ciphertext copied into another workspace's or version's slot fails loudly.

Workspace data (documents, versions, notes, credentials) is encrypted by `branch_keys.BranchKeyCipher`
under the workspace's own branch key instead; see docs/decisions/0013-a-branch-key-per-workspace.md.
No cipher keeps decrypted plaintext: a warm process reads without KMS because key material is cached
(the branch key, or the payload codec's data key), never the text.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any, ClassVar

import aws_encryption_sdk
from aws_encryption_sdk import CachingCryptoMaterialsManager, LocalCryptoMaterialsCache
from aws_encryption_sdk.exceptions import AWSEncryptionSDKClientError
from aws_encryption_sdk.identifiers import Algorithm, CommitmentPolicy
from aws_encryption_sdk.internal.formatting.deserialize import deserialize_header
from aws_encryption_sdk.key_providers.kms import KMSMasterKey, KMSMasterKeyConfig
from botocore.exceptions import BotoCoreError, ClientError

from workspace_memory.kernel.errors import DecryptionFailed, DomainError, Unavailable

ALGORITHM = Algorithm.AES_256_GCM_HKDF_SHA512_COMMIT_KEY
DATA_KEY_MAX_MESSAGES = 1000


class EnvelopeCipher:
    """Implements `ports.Cipher` over aws-encryption-sdk materials (`key_provider=`, `materials_manager=` or
    `keyring=`): one encrypted data key per message, a committing suite, the context verified on decrypt.

    `reproduce_context`: also hand the expected context to the SDK on decrypt (supported for keyrings of the
    Material Providers Library), so a mismatch is refused before any key material is fetched.
    """

    encrypt_errors: ClassVar[tuple[type[Exception], ...]] = (ClientError, BotoCoreError, AWSEncryptionSDKClientError)
    """Raised by the SDK or its materials on encrypt; each becomes `Unavailable`."""
    decrypt_rejections: ClassVar[tuple[type[Exception], ...]] = (AWSEncryptionSDKClientError,)
    """Raised on decrypt when the ciphertext, its context or its key material is refused; see `rejected`."""

    def __init__(self, materials: Mapping[str, Any], *, reproduce_context: bool = False) -> None:
        self._materials = dict(materials)
        self._reproduce_context = reproduce_context
        self._sdk = aws_encryption_sdk.EncryptionSDKClient(
            commitment_policy=CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT, max_encrypted_data_keys=1
        )

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        try:
            ciphertext, _ = self._sdk.encrypt(
                source=plaintext, encryption_context=dict(context), algorithm=ALGORITHM, **self._materials
            )
        except self.encrypt_errors as exc:
            raise Unavailable(f"encryption failed ({type(exc).__name__})", transient=True) from exc
        return bytes(ciphertext)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        expected = {"encryption_context": dict(context)} if self._reproduce_context else {}
        try:
            plaintext, header = self._sdk.decrypt(source=ciphertext, **self._materials, **expected)
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable(f"decryption failed ({type(exc).__name__})", transient=True) from exc
        except self.decrypt_rejections as exc:
            claimed = _claimed_context(ciphertext) if self._reproduce_context else None
            if claimed is not None:
                _check_context(claimed, context)  # a refused reproduction: name the fields, as below
            raise self.rejected(exc) from exc
        _check_context(header.encryption_context, context)
        return bytes(plaintext)

    def rejected(self, exc: Exception) -> DomainError:
        """What a refused decrypt means to the caller: by default, this ciphertext cannot be decrypted here."""
        return DecryptionFailed(f"ciphertext rejected ({type(exc).__name__})")


def _check_context(stored: Mapping[str, str], expected: Mapping[str, str]) -> None:
    mismatched = sorted(k for k, v in expected.items() if stored.get(k) != v)
    if mismatched:
        raise DecryptionFailed("encryption context mismatch on " + ",".join(mismatched), fields=mismatched)


def _claimed_context(ciphertext: bytes) -> Mapping[str, str] | None:
    """The context a message's header claims, unauthenticated: only used to name the fields of a mismatch the
    SDK has already refused. None if the header does not even parse."""
    try:
        header, _ = deserialize_header(io.BytesIO(ciphertext), max_encrypted_data_keys=1)
    except Exception:  # anything unparsable: the caller reports the SDK's own refusal
        return None
    return dict(header.encryption_context)


class KmsCipher(EnvelopeCipher):
    """Each data key wrapped by the KMS key itself: a KMS call per encrypt and per decrypt, unless
    `data_key_reuse_seconds` is given.

    Kept for the Temporal payload codec, whose payloads belong to no workspace (the codec only sees
    payloads), and for comparing the branch-key scheme against it (scripts/keyring_bench.py).
    """

    def __init__(self, kms_client: Any, key_arn: str, data_key_reuse_seconds: float | None = None) -> None:
        """`data_key_reuse_seconds`: reuse a data key (and its KMS-decrypted form) for that long, up to
        `DATA_KEY_MAX_MESSAGES` messages - the SDK's caching materials manager. Meant for the Temporal payload
        codec, which encrypts several payloads per model round under one constant context."""
        key = KMSMasterKey(config=KMSMasterKeyConfig(key_id=key_arn, client=kms_client))
        materials: dict[str, Any] = {"key_provider": key}
        if data_key_reuse_seconds is not None:
            materials = {
                "materials_manager": CachingCryptoMaterialsManager(
                    cache=LocalCryptoMaterialsCache(capacity=64),
                    max_age=float(data_key_reuse_seconds),
                    max_messages_encrypted=DATA_KEY_MAX_MESSAGES,
                    master_key_provider=key,
                )
            }
        super().__init__(materials)


PAYLOAD_DATA_KEY_SECONDS = 300.0
"""A model round encrypts several payloads under the one constant context: reusing a data key for five
minutes (and at most `DATA_KEY_MAX_MESSAGES` payloads) turns a GenerateDataKey per payload into one per
window, and repeated decodes of the same data key into one KMS Decrypt."""


def payload_cipher(kms_client: Any, key_arn: str) -> KmsCipher:
    """The cipher the Temporal payload codec runs on (temporal_codec): the service's KMS key, with bounded
    data-key reuse. Here rather than there so that building the services does not import the Temporal SDK."""
    return KmsCipher(kms_client, key_arn, data_key_reuse_seconds=PAYLOAD_DATA_KEY_SECONDS)
