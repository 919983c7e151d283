"""Fakes for unit tests of pure logic: a cipher that checks contexts like the real one, without KMS, and an
API Gateway event for a bare GET."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.memory_table import MemoryKeyStore
from workspace_memory.adapters.routed_cipher import SERVICE_KINDS
from workspace_memory.kernel.errors import DecryptionFailed, Unavailable


class FakeCipher:
    """Reverses the bytes behind a serial-number header and remembers the context of each ciphertext; a
    decrypt under any other context fails, as the real cipher's context check does.

    Like the service's cipher (routed_cipher), it refuses a context that names neither a workspace nor a
    service kind; given the key store, it refuses to encrypt for a workspace that has no branch key."""

    def __init__(self, key_store: MemoryKeyStore | None = None) -> None:
        self.contexts: list[dict[str, str]] = []
        self.decrypts = 0
        self._key_store = key_store

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        workspace = context.get("workspace")
        if not workspace and context.get("kind") not in SERVICE_KINDS:
            raise ValueError(f"context names no workspace: {dict(context)}")
        service = context.get("kind") in SERVICE_KINDS  # under the KMS key, even when it names a workspace
        if workspace and not service and self._key_store is not None and workspace not in self._key_store.branch_keys:
            raise Unavailable(f"no branch key for workspace {workspace}")
        self.contexts.append(dict(context))
        return f"{len(self.contexts) - 1}|".encode() + plaintext[::-1]

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        self.decrypts += 1
        serial, _, body = ciphertext.partition(b"|")
        if not serial.isdigit() or int(serial) >= len(self.contexts):
            raise DecryptionFailed("not a ciphertext of this cipher")
        if self.contexts[int(serial)] != dict(context):
            raise DecryptionFailed("encryption context mismatch")
        return body[::-1]


def get_event(path: str) -> dict[str, Any]:
    """An HTTP API (payload 2.0) event for a bare GET of `path` from loopback."""
    return {
        "version": "2.0",
        "routeKey": f"GET {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {},
        "requestContext": {"http": {"method": "GET", "path": path, "sourceIp": "127.0.0.1"}, "stage": "$default"},
        "isBase64Encoded": False,
    }
