"""A workspace's name, sealed (docs/decisions/0072): its owner types it, so it is free text, never in clear.

The function that creates, lists and deletes workspaces holds no branch key by design: it can make a
workspace's key and destroy it, never open memory with it. So the name is sealed under the stack's KMS key
with the service kind `workspace-name`, which only that function's role may use (its policy and the key
policy), and the workspace's id in the context: a name copied onto another workspace's META does not open
there. A warm process opens a name it has opened before without KMS (the payload cipher's cache of data keys).
"""

from __future__ import annotations

from workspace_memory.store.ports import Cipher

NAME_KIND = "workspace-name"
"""A service kind (adapters/routed_cipher.py): the KMS key, even though the context names the workspace."""


def name_context(workspace_id: str) -> dict[str, str]:
    return {"kind": "workspace-name", "workspace": workspace_id}


def seal_name(cipher: Cipher, workspace_id: str, name: str) -> bytes:
    return cipher.encrypt(name.encode("utf-8"), name_context(workspace_id))


def open_name(cipher: Cipher, workspace_id: str, sealed: bytes | None) -> str:
    """The name, or "" for a workspace that was never given one."""
    return "" if not sealed else cipher.decrypt(sealed, name_context(workspace_id)).decode("utf-8")
