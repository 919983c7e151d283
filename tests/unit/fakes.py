"""Fakes for unit tests of pure logic: a cipher that checks contexts like the real one, without KMS."""

from __future__ import annotations

from collections.abc import Mapping

from workspace_memory.errors import DecryptionFailed


class FakeCipher:
    """Reverses the bytes behind a serial-number header and remembers the context of each ciphertext; a
    decrypt under any other context fails, as the real cipher's context check does."""

    def __init__(self) -> None:
        self.contexts: list[dict[str, str]] = []
        self.decrypts = 0

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        self.contexts.append(dict(context))
        return f"{len(self.contexts) - 1}|".encode() + plaintext[::-1]

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        self.decrypts += 1
        serial, _, body = ciphertext.partition(b"|")
        if self.contexts[int(serial)] != dict(context):
            raise DecryptionFailed("encryption context mismatch")
        return body[::-1]
