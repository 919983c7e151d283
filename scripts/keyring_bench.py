"""The branch-key scheme's cost per encrypt and decrypt against the KMS-per-object scheme it replaced, in one run.

    .venv/bin/python -m scripts.keyring_bench [--pairs 200] [--size 2048] [--json PATH]

Not a test: it starts its own moto server process (the local stack's), provisions the tables and key, creates
one workspace (its branch key with it), then runs encrypt+decrypt pairs of `size` random bytes under one
document context through two ciphers, each built on clients of its own as a new process would be:

- `keyring`: `BranchKeyCipher`, the hierarchical keyring on the workspace's branch key (what the service uses);
- `kms per object`: `KmsCipher`, a KMS GenerateDataKey per encrypt and a KMS Decrypt per decrypt (the scheme
  before branch keys, without its plaintext cache).

The first pair of each is its cold start (reported apart); the rest alternate between the two schemes pair by
pair, so any drift of the server falls on both. AWS calls are counted by a botocore `before-call.*.*` handler
on the cipher's KMS client and the key store's DynamoDB client. moto answers KMS on loopback, so the times
understate what a KMS round trip costs on AWS; the calls per operation are the portable result.

`measure` is the entry point for scripts/bench: give it settings and a workspace that has its branch key.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scripts.localstack.resources import isolate_environment
from scripts.localstack.stack import LocalStack, StackConfig
from workspace_memory.access import ShareType
from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.branch_keys import BranchKeyCipher, key_store
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.bootstrap import build_services
from workspace_memory.document import document_context
from workspace_memory.ports import Cipher
from workspace_memory.settings import Settings

KEYRING, KMS_PER_OBJECT = "keyring", "kms per object"


class Calls:
    """Counts AWS operations of the clients it is attached to, by `service.Operation`."""

    def __init__(self, *clients: Any) -> None:
        self.names: list[str] = []
        for client in clients:
            client.meta.events.register("before-call.*.*", self, unique_id=f"keyring-bench-{id(self)}")

    def __call__(self, event_name: str, **_: Any) -> None:
        self.names.append(".".join(event_name.split(".")[1:3]))

    def count(self, prefix: str, since: int = 0) -> int:
        return sum(1 for name in self.names[since:] if name.startswith(prefix))


@dataclass(frozen=True)
class SchemeCost:
    name: str
    cold_kms_calls: int
    """KMS calls of the first encrypt+decrypt pair in a new process."""
    cold_key_store_reads: int
    cold_ms: float
    kms_calls_per_pair: float
    """Warm: KMS calls per encrypt+decrypt pair after the first."""
    key_store_reads_per_pair: float
    encrypt_ms: float
    """Warm: median milliseconds per encrypt."""
    decrypt_ms: float


@dataclass(frozen=True)
class KeyringCost:
    pairs: int
    size: int
    keyring: SchemeCost
    kms: SchemeCost

    def ratios(self) -> dict[str, float]:
        """keyring / kms per object, warm: below 1 the keyring is cheaper."""
        return {
            "encrypt": _ratio(self.keyring.encrypt_ms, self.kms.encrypt_ms),
            "decrypt": _ratio(self.keyring.decrypt_ms, self.kms.decrypt_ms),
            "kms calls": _ratio(self.keyring.kms_calls_per_pair, self.kms.kms_calls_per_pair),
        }


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


class _Scheme:
    def __init__(self, name: str, cipher: Cipher, calls: Calls) -> None:
        self.name, self.cipher, self.calls = name, cipher, calls
        self.encrypt_ns: list[int] = []
        self.decrypt_ns: list[int] = []

    def pair(self, plaintext: bytes, context: Mapping[str, str]) -> None:
        start = time.perf_counter_ns()
        ciphertext = self.cipher.encrypt(plaintext, context)
        middle = time.perf_counter_ns()
        if self.cipher.decrypt(ciphertext, context) != plaintext:
            raise RuntimeError(f"{self.name}: a round trip changed the text")
        end = time.perf_counter_ns()
        self.encrypt_ns.append(middle - start)
        self.decrypt_ns.append(end - middle)


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
        _Scheme(KEYRING, BranchKeyCipher(store), Calls(ring_clients.kms, ring_clients.key_store)),
        _Scheme(KMS_PER_OBJECT, KmsCipher(kms_clients.kms, settings.kms_key_id), Calls(kms_clients.kms)),
    ]
    cold: dict[str, tuple[int, int, float]] = {}
    for scheme in schemes:
        scheme.pair(os.urandom(size), context)
        cold[scheme.name] = (
            scheme.calls.count("kms."),
            scheme.calls.count("dynamodb."),
            (scheme.encrypt_ns[0] + scheme.decrypt_ns[0]) / 1e6,
        )
        scheme.encrypt_ns.clear()
        scheme.decrypt_ns.clear()
    marks = {scheme.name: len(scheme.calls.names) for scheme in schemes}
    for n in range(pairs):
        for scheme in schemes if n % 2 == 0 else reversed(schemes):
            scheme.pair(os.urandom(size), context)

    def cost(scheme: _Scheme) -> SchemeCost:
        kms_calls, reads, cold_ms = cold[scheme.name]
        since = marks[scheme.name]
        return SchemeCost(
            name=scheme.name,
            cold_kms_calls=kms_calls,
            cold_key_store_reads=reads,
            cold_ms=cold_ms,
            kms_calls_per_pair=scheme.calls.count("kms.", since) / pairs,
            key_store_reads_per_pair=scheme.calls.count("dynamodb.", since) / pairs,
            encrypt_ms=statistics.median(scheme.encrypt_ns) / 1e6,
            decrypt_ms=statistics.median(scheme.decrypt_ns) / 1e6,
        )

    return KeyringCost(pairs, size, cost(schemes[0]), cost(schemes[1]))


def format_report(result: KeyringCost) -> str:
    rows: list[tuple[str, ...]] = [
        ("scheme", "cold KMS", "cold reads", "cold ms", "KMS/pair", "reads/pair", "encrypt ms", "decrypt ms")
    ]
    for s in (result.keyring, result.kms):
        rows.append(
            (
                s.name,
                str(s.cold_kms_calls),
                str(s.cold_key_store_reads),
                f"{s.cold_ms:.1f}",
                f"{s.kms_calls_per_pair:.2f}",
                f"{s.key_store_reads_per_pair:.2f}",
                f"{s.encrypt_ms:.3f}",
                f"{s.decrypt_ms:.3f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    table = "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)
    ratios = ", ".join(f"{name} {value:.2f}x" for name, value in result.ratios().items())
    return (
        f"Keyring cost: {result.pairs} warm encrypt+decrypt pairs of {result.size} B per scheme, after one cold pair"
        " (medians; reads = key-store GetItem)\n"
        f"{table}\n"
        f"keyring / kms per object (warm): {ratios}"
    )


def run(settings: Settings, pairs: int, size: int) -> KeyringCost:
    workspace_id = build_services(settings).access.create_workspace("bench-owner", "keyring", ShareType.SHARED)
    return measure(settings, workspace_id, pairs, size)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=_positive, default=200, help="warm encrypt+decrypt pairs per scheme (200)")
    parser.add_argument("--size", type=_positive, default=2048, help="plaintext bytes (2048)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    isolate_environment()
    with LocalStack(StackConfig(table_name="keyring-bench")) as stack:
        result = run(stack.settings(), args.pairs, args.size)
    out(format_report(result))
    if args.json is not None:
        data = {**asdict(result), "ratios": result.ratios()}
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
