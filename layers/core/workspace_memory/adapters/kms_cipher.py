"""aws-encryption-sdk envelope encryption under one KMS key.

Suite: AES-256-GCM with HKDF-SHA512 and key commitment, *without* signatures: the service is both the
only writer and the only reader, so a signature would prove nothing a committed key does not, and it
would cost an ECDSA verification on every recall. The SDK does not check the encryption context on
decrypt, so we do: a ciphertext copied into another workspace's or version's slot fails loudly.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import aws_encryption_sdk
from aws_encryption_sdk import CachingCryptoMaterialsManager, LocalCryptoMaterialsCache
from aws_encryption_sdk.exceptions import AWSEncryptionSDKClientError
from aws_encryption_sdk.identifiers import Algorithm, CommitmentPolicy
from aws_encryption_sdk.key_providers.kms import KMSMasterKey, KMSMasterKeyConfig
from botocore.exceptions import BotoCoreError, ClientError

from workspace_memory.errors import DecryptionFailed, Unavailable

ALGORITHM = Algorithm.AES_256_GCM_HKDF_SHA512_COMMIT_KEY
DATA_KEY_MAX_MESSAGES = 1000


class KmsCipher:
    """Implements `ports.Cipher`.

    Decrypted plaintexts of recently read ciphertexts are kept in a small in-process LRU so that a warm
    Lambda recalling an unchanged head makes no KMS call. Entries are keyed by the ciphertext digest and
    the expected context, so a cache hit has passed the same context check as a KMS round trip.
    """

    def __init__(
        self, kms_client: Any, key_arn: str, cache_entries: int = 256, data_key_reuse_seconds: float | None = None
    ) -> None:
        """`data_key_reuse_seconds`: reuse a data key (and its KMS-decrypted form) for that long, up to
        `DATA_KEY_MAX_MESSAGES` messages - the SDK's caching materials manager. Meant for the Temporal payload
        codec, which encrypts several payloads per model round under one constant context; memory versions
        and notes keep a fresh data key each."""
        self._key = KMSMasterKey(config=KMSMasterKeyConfig(key_id=key_arn, client=kms_client))
        self._materials: dict[str, Any] = {"key_provider": self._key}
        if data_key_reuse_seconds is not None:
            self._materials = {
                "materials_manager": CachingCryptoMaterialsManager(
                    cache=LocalCryptoMaterialsCache(capacity=64),
                    max_age=float(data_key_reuse_seconds),
                    max_messages_encrypted=DATA_KEY_MAX_MESSAGES,
                    master_key_provider=self._key,
                )
            }
        self._sdk = aws_encryption_sdk.EncryptionSDKClient(
            commitment_policy=CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT, max_encrypted_data_keys=1
        )
        self._cache: OrderedDict[tuple[bytes, tuple[tuple[str, str], ...]], bytes] = OrderedDict()
        self._cache_entries = cache_entries
        self._lock = threading.Lock()

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        try:
            ciphertext, _ = self._sdk.encrypt(
                source=plaintext, encryption_context=dict(context), algorithm=ALGORITHM, **self._materials
            )
        except (ClientError, BotoCoreError, AWSEncryptionSDKClientError) as exc:
            raise Unavailable(f"encryption failed ({type(exc).__name__})", transient=True) from exc
        self._remember(ciphertext, context, plaintext)
        return bytes(ciphertext)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        key = self._cache_key(ciphertext, context)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        try:
            plaintext, header = self._sdk.decrypt(source=ciphertext, **self._materials)
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable(f"decryption failed ({type(exc).__name__})", transient=True) from exc
        except AWSEncryptionSDKClientError as exc:
            raise DecryptionFailed(f"ciphertext rejected ({type(exc).__name__})") from exc
        stored = header.encryption_context
        mismatched = sorted(k for k, v in context.items() if stored.get(k) != v)
        if mismatched:
            raise DecryptionFailed("encryption context mismatch on " + ",".join(mismatched), fields=mismatched)
        self._remember(ciphertext, context, plaintext)
        return bytes(plaintext)

    @staticmethod
    def _cache_key(ciphertext: bytes, context: Mapping[str, str]) -> tuple[bytes, tuple[tuple[str, str], ...]]:
        return hashlib.sha256(ciphertext).digest(), tuple(sorted(context.items()))

    def _remember(self, ciphertext: bytes, context: Mapping[str, str], plaintext: bytes) -> None:
        with self._lock:
            self._cache[self._cache_key(ciphertext, context)] = bytes(plaintext)
            while len(self._cache) > self._cache_entries:
                self._cache.popitem(last=False)
