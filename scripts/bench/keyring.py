"""The branch-key scheme's cost per encrypt and per decrypt against the KMS-per-object scheme it replaced.

`measure` runs encrypt+decrypt pairs of `size` random bytes under one document context of a workspace that
has its branch key, through two ciphers, each built on clients of its own as a new process would be:

- `keyring`: `BranchKeyCipher`, the hierarchical keyring on the workspace's branch key (what the service uses);
- `kms per object`: `KmsCipher`, a KMS GenerateDataKey per encrypt and a KMS Decrypt per decrypt (the scheme
  before branch keys, without its plaintext cache).

The first pair of each is its cold start (reported apart); the rest alternate between the two schemes pair by
pair, so any drift of the server falls on both. AWS calls are counted by a `CallRecorder` on the cipher's KMS
client and the key store's DynamoDB client. moto answers KMS on loopback, so the times understate what a KMS
round trip costs on AWS; the calls per operation are the portable result.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from scripts.bench.stats import KEYRING, KMS_PER_OBJECT, CallRecorder, KeyringCost, SchemeCost, median
from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.branch_keys import BranchKeyCipher, key_store
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.document.versions import document_context
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.ports import Cipher


class _Scheme:
    def __init__(self, name: str, cipher: Cipher, *clients: object) -> None:
        self.name, self.cipher = name, cipher
        self.calls = CallRecorder()
        self.calls.attach(*clients)
        self.encrypt_ns: list[int] = []
        self.decrypt_ns: list[int] = []
        self.encrypt_kms: list[int] = []
        self.decrypt_kms: list[int] = []

    def kms_since(self, mark: int) -> int:
        return sum(1 for name in self.calls.since(mark) if name.startswith("kms."))

    def pair(self, plaintext: bytes, context: Mapping[str, str]) -> None:
        first = len(self.calls.calls)
        start = time.perf_counter_ns()
        ciphertext = self.cipher.encrypt(plaintext, context)
        middle = time.perf_counter_ns()
        second = len(self.calls.calls)
        if self.cipher.decrypt(ciphertext, context) != plaintext:
            raise RuntimeError(f"{self.name}: a round trip changed the text")
        end = time.perf_counter_ns()
        self.encrypt_ns.append(middle - start)
        self.decrypt_ns.append(end - middle)
        self.encrypt_kms.append(self.kms_since(first) - self.kms_since(second))
        self.decrypt_kms.append(self.kms_since(second))

    def reset(self) -> None:
        for samples in (self.encrypt_ns, self.decrypt_ns, self.encrypt_kms, self.decrypt_kms):
            samples.clear()


def measure(settings: Settings, workspace_id: str, pairs: int = 200, size: int = 2048) -> KeyringCost:
    """Cold first pair and `pairs` warm pairs of each scheme (see the module docstring)."""
    if pairs < 1 or size < 1:
        raise ValueError("pairs and size must be positive")
    if settings.key_store_table_name is None:
        raise ValueError("the keyring needs settings.key_store_table_name")
    context = document_context(workspace_id, 1)
    ring_clients, kms_clients = build_clients(settings), build_clients(settings)
    store = key_store(ring_clients.key_store, ring_clients.kms, settings.key_store_table_name, settings.kms_key_id)
    schemes = [
        _Scheme(KEYRING, BranchKeyCipher(store), ring_clients.kms, ring_clients.key_store),
        _Scheme(KMS_PER_OBJECT, KmsCipher(kms_clients.kms, settings.kms_key_id), kms_clients.kms),
    ]
    cold: dict[str, tuple[int, int, float]] = {}
    for scheme in schemes:
        scheme.pair(os.urandom(size), context)
        names = scheme.calls.calls
        cold[scheme.name] = (
            scheme.kms_since(0),
            sum(1 for name in names if name.startswith("dynamodb.")),
            (scheme.encrypt_ns[0] + scheme.decrypt_ns[0]) / 1e6,
        )
        scheme.reset()
    marks = {scheme.name: len(scheme.calls.calls) for scheme in schemes}
    for n in range(pairs):
        for scheme in schemes if n % 2 == 0 else reversed(schemes):
            scheme.pair(os.urandom(size), context)

    def cost(scheme: _Scheme) -> SchemeCost:
        kms_calls, reads, cold_ms = cold[scheme.name]
        warm = scheme.calls.since(marks[scheme.name])
        return SchemeCost(
            name=scheme.name,
            cold_kms_calls=kms_calls,
            cold_key_store_reads=reads,
            cold_ms=cold_ms,
            kms_calls_per_encrypt=sum(scheme.encrypt_kms) / pairs,
            kms_calls_per_decrypt=sum(scheme.decrypt_kms) / pairs,
            key_store_reads_per_pair=sum(1 for name in warm if name.startswith("dynamodb.")) / pairs,
            encrypt_ms=median(scheme.encrypt_ns) / 1e6,
            decrypt_ms=median(scheme.decrypt_ns) / 1e6,
        )

    return KeyringCost(pairs, size, cost(schemes[0]), cost(schemes[1]))
