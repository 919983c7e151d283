"""An archive's signature (docs/decisions/0070): the service's proof that it wrote a manifest as it stands.

The manifest's digests tie every file to the manifest; the signature ties the manifest to this service. It is
the SHA-256 of the canonical manifest (every field but `signature`), encrypted under the stack's KMS key with
the service context `SIGNATURE_CONTEXT`, which only the exports function may use (its role and the key
policy): authenticated encryption under a key no caller holds, a MAC in effect. A caller holding an archive
can read the signature but cannot make one: changing a member, an author or a row and recomputing every
digest leaves a signature that no longer opens to the manifest's digest. The key is the stack's, not the
source workspace's branch key, so an archive still imports after its workspace was deleted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping

from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.store.ports import Cipher
from workspace_memory.workspaces.export_files import canonical
from workspace_memory.workspaces.import_errors import InvalidArchive

SIGNATURE_CONTEXT: dict[str, str] = {"kind": "archive-signature", "format": "1"}
"""A service kind (adapters/routed_cipher.py): the KMS key, not a branch key, and no workspace named."""
SIGNATURE_FIELD = "signature"
MAX_SIGNATURE_CHARS = 2_048
"""A signature is one small envelope (a few hundred characters); anything longer is not one, and is not opened."""


def _digest(manifest: Mapping[str, object]) -> bytes:
    unsigned = {name: value for name, value in manifest.items() if name != SIGNATURE_FIELD}
    return hashlib.sha256(canonical(unsigned).encode("utf-8")).hexdigest().encode("ascii")


def signed(cipher: Cipher, manifest: Mapping[str, object]) -> dict[str, object]:
    """The manifest with its signature."""
    signature = cipher.encrypt(_digest(manifest), SIGNATURE_CONTEXT)
    return {**manifest, SIGNATURE_FIELD: base64.b64encode(signature).decode("ascii")}


def check_signature(cipher: Cipher, manifest: Mapping[str, object]) -> None:
    """Refuses (`InvalidArchive`) a manifest this service did not sign as it stands; a KMS outage stays an
    outage (`Unavailable` passes through)."""
    signature = manifest.get(SIGNATURE_FIELD)
    if not isinstance(signature, str) or not 0 < len(signature) <= MAX_SIGNATURE_CHARS:
        raise InvalidArchive("the manifest carries no signature of this service")
    try:
        opened = cipher.decrypt(base64.b64decode(signature, validate=True), SIGNATURE_CONTEXT)
    except (binascii.Error, DecryptionFailed):
        raise InvalidArchive("the manifest's signature is not this service's") from None
    if not hmac.compare_digest(opened, _digest(manifest)):
        raise InvalidArchive("the manifest was changed after this service signed it")
