"""Sealed text: encrypted under a context that names its slot, with the digest and size stored beside it.

Every encrypted kind (document versions, working notes, credentials, and later entries) goes through
these two functions, so a new kind needs only its context: the ciphertext is bound to where it lives, its
SHA-256 lets anyone check integrity without a key, and sizes are known without decrypting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.store.ports import Cipher


@dataclass(frozen=True)
class Sealed:
    ciphertext: bytes
    sha256: str
    bytes: int
    """The plaintext's UTF-8 size."""


def seal(cipher: Cipher, text: str, context: Mapping[str, str]) -> Sealed:
    raw = text.encode("utf-8")
    ciphertext = cipher.encrypt(raw, context)
    return Sealed(ciphertext, hashlib.sha256(ciphertext).hexdigest(), len(raw))


def unseal(cipher: Cipher, ciphertext: bytes, context: Mapping[str, str], sha256: str | None = None) -> str:
    """The text, iff the ciphertext decrypts under exactly `context` (and matches `sha256` when given)."""
    if sha256 is not None and hashlib.sha256(ciphertext).hexdigest() != sha256:
        raise DecryptionFailed("ciphertext does not match its recorded digest")
    return cipher.decrypt(ciphertext, context).decode("utf-8")
