"""The single-table key layout. Access patterns are documented in docs/data-model.md."""

from __future__ import annotations

Key = tuple[str, str]


def ws(workspace_id: str) -> str:
    return f"WS#{workspace_id}"


def meta(workspace_id: str) -> Key:
    return ws(workspace_id), "META"


def member(workspace_id: str, user_id: str) -> Key:
    return ws(workspace_id), f"MEMBER#{user_id}"


def policy(workspace_id: str) -> Key:
    return ws(workspace_id), "POLICY"


def head(workspace_id: str) -> Key:
    return ws(workspace_id), "DOC#HEAD"


VERSION_PREFIX = "DOC#V#"


def version(workspace_id: str, number: int) -> Key:
    return ws(workspace_id), f"{VERSION_PREFIX}{number:012d}"


def key_session(workspace_id: str, session_id: str) -> Key:
    return ws(workspace_id), f"KEYSESSION#{session_id}"


def key_revocation(workspace_id: str, session_id: str) -> Key:
    return ws(workspace_id), f"KEYREVOKED#{session_id}"


def conv(conversation_id: str) -> str:
    return f"CONV#{conversation_id}"


def credential(conversation_id: str) -> Key:
    return conv(conversation_id), "CREDENTIAL"


def admission_key(conversation_id: str, idempotency_key: str) -> Key:
    return conv(conversation_id), f"ADMKEY#{idempotency_key}"


def admission(admission_id: str) -> Key:
    return f"ADM#{admission_id}", "ADMISSION"


RECEIPT_PREFIX = "RECEIPT#"


def receipt(conversation_id: str, at_ms: int, admission_id: str, seq: str) -> Key:
    return conv(conversation_id), f"{RECEIPT_PREFIX}{at_ms:015d}#{admission_id}#{seq}"


def notes(session_id: str) -> Key:
    return f"SESSION#{session_id}", "NOTES"


def as_key(key: Key) -> dict[str, str]:
    return {"pk": key[0], "sk": key[1]}
