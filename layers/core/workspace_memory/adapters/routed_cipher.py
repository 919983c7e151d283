"""Which key protects what, decided by the encryption context alone.

- A context that names a `workspace` (documents, versions, notes, admission credentials): the workspace's
  own branch key (`branch_keys.BranchKeyCipher`), so deleting that key shreds exactly that workspace.
- A service kind (`temporal-payload`, the payload codec's constant context): the KMS key (`KmsCipher`), as the
  worker and the codec server use it; a codec sees payloads only, never the workspace they concern. Likewise
  `archive-signature` (an archive manifest's signature): an archive outlives the workspace it came from; and
  `workspace-name` (a workspace's name, workspaces/workspace_names.py), whose context names its workspace but
  which the function without branch keys seals and opens (`NAMING_SERVICE_KINDS`); likewise `key-session-binding`
  (a key session's key prefixes, workspaces/key_binding.py, decision 0077). Any other context that
  names a workspace is workspace data, whatever kind it claims.
- Anything else is a bug (a new kind of workspace data that forgot its workspace) and is refused.

A ciphertext moved across the line fails either way: its encrypted data key was wrapped by the other scheme.
"""

from __future__ import annotations

from collections.abc import Mapping

from workspace_memory.store.ports import Cipher

SERVICE_KINDS = frozenset({"temporal-payload", "archive-signature", "workspace-name", "key-session-binding"})
"""Context kinds under the KMS key (kept in step with temporal_codec.PAYLOAD_CONTEXT,
archive_signature.SIGNATURE_CONTEXT, workspace_names.NAME_KIND and key_binding.BINDING_KIND by a test)."""
NAMING_SERVICE_KINDS = frozenset({"workspace-name", "key-session-binding"})
"""The service kinds whose context names a workspace: the KMS key all the same."""


class RoutedCipher:
    """Implements `ports.Cipher` by routing each call to the workspace or the service cipher."""

    def __init__(self, workspace: Cipher, service: Cipher) -> None:
        self.workspace = workspace
        self.service = service

    def route(self, context: Mapping[str, str]) -> Cipher:
        kind = context.get("kind")
        if kind in NAMING_SERVICE_KINDS:
            return self.service
        if context.get("workspace"):
            return self.workspace
        if kind in SERVICE_KINDS:
            return self.service
        raise ValueError("an encryption context names its workspace, or a service kind: " + ",".join(sorted(context)))

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        return self.route(context).encrypt(plaintext, context)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        return self.route(context).decrypt(ciphertext, context)
