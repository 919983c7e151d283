"""Turn items as the turns context reads and writes them (docs/data-model.md): the admission
(`ADM#{id}` `ADMISSION`, with the capture's receipt once consumed), its idempotency marker (`ADMKEY#{key}`), the
conversation's credential slot (`CREDENTIAL`) and owner (`OWNER`), recall receipts (`RECEIPT#…`) and a
session's working notes (`NOTES#{user}#{session}`).

Each record spells its own attribute names (`from_item`, `to_item`); the domain never does. What a condition
says of them stays in `store/changes` and its adapters. An optional attribute that is not set is not stored
at all (no nulls)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from workspace_memory.kernel.terms import MemoryState, Mode, RecallStatus, Scope
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_bytes, present


@dataclass(frozen=True)
class CaptureReceipt:
    """A committed capture's receipt (the admission's `captureReceipt` map): ids, sizes and hashes, never text."""

    admission_id: str
    version: int
    ciphertext_sha256: str
    bytes: int
    committed_at: str

    def to_map(self) -> dict[str, Any]:
        return {
            "admissionId": self.admission_id,
            "version": self.version,
            "ciphertextSha256": self.ciphertext_sha256,
            "bytes": self.bytes,
            "committedAt": self.committed_at,
        }

    @classmethod
    def from_map(cls, receipt: dict[str, Any]) -> CaptureReceipt:
        return cls(
            admission_id=receipt["admissionId"],
            version=int(receipt["version"]),
            ciphertext_sha256=receipt["ciphertextSha256"],
            bytes=int(receipt["bytes"]),
            committed_at=receipt["committedAt"],
        )


@dataclass(frozen=True)
class AdmissionRecord:
    """An admission: the authority it froze, the credential (its hash, and sealed for a resend), what the
    request brought along (the message sealed, kind `turn-message`) and its lifetime; `status` is `admitted`
    until its capture consumes it (`committed`, with the request hash and receipt)."""

    id: str
    conversation_id: str
    workspace_id: str
    user_id: str
    mode: Mode
    policy_revision: int
    clear_generation: int
    consent_revision: int
    scopes: frozenset[Scope]
    nonce_hash: str
    credential_ciphertext: bytes
    expires_at: int
    status: str
    created_at: str
    ttl: int
    key_session_id: str | None = None
    session_id: str | None = None
    memory_state: MemoryState | None = None
    turn_id: str | None = None
    message_ciphertext: bytes | None = None
    """The turn's user message, sealed (kind `turn-message`): what an agent's rule must quote
    (docs/architecture.md#rules)."""
    capture_request_hash: str | None = None
    capture_receipt: CaptureReceipt | None = None

    @classmethod
    def from_item(cls, item: Item) -> Self:
        """Scopes absent: the item predates them (it grants all)."""
        state, scopes, receipt = item.get("memoryState"), item.get("scopes"), item.get("captureReceipt")
        return cls(
            id=item["admissionId"],
            conversation_id=item["conversationId"],
            workspace_id=item["workspaceId"],
            user_id=item["userId"],
            mode=Mode(item["mode"]),
            policy_revision=int(item["policyRevision"]),
            clear_generation=int(item["clearGeneration"]),
            consent_revision=int(item["consentRevision"]),
            scopes=frozenset(Scope) if scopes is None else frozenset(Scope(value) for value in scopes),
            nonce_hash=item["nonceHash"],
            credential_ciphertext=bytes(item["credentialCiphertext"]),
            expires_at=int(item["expiresAt"]),
            status=item["status"],
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
            key_session_id=item.get("keySessionId"),
            session_id=item.get("sessionId"),
            memory_state=MemoryState.model_validate(state) if state else None,
            turn_id=item.get("turnId"),
            message_ciphertext=optional_bytes(item.get("messageCiphertext")),
            capture_request_hash=item.get("captureRequestHash"),
            capture_receipt=None if receipt is None else CaptureReceipt.from_map(receipt),
        )

    def to_item(self) -> Item:
        return {
            **keys.as_key(keys.admission(self.id)),
            **present(
                {
                    "admissionId": self.id,
                    "conversationId": self.conversation_id,
                    "workspaceId": self.workspace_id,
                    "userId": self.user_id,
                    "mode": self.mode.value,
                    "policyRevision": self.policy_revision,
                    "clearGeneration": self.clear_generation,
                    "consentRevision": self.consent_revision,
                    "scopes": sorted(scope.value for scope in self.scopes),
                    "nonceHash": self.nonce_hash,
                    "credentialCiphertext": self.credential_ciphertext,
                    "expiresAt": self.expires_at,
                    "status": self.status,
                    "createdAt": self.created_at,
                    "ttl": self.ttl,
                    "keySessionId": self.key_session_id,
                    "sessionId": self.session_id,
                    "memoryState": None
                    if self.memory_state is None
                    else self.memory_state.model_dump(exclude_none=True),
                    "turnId": self.turn_id,
                    "messageCiphertext": self.message_ciphertext,
                    "captureRequestHash": self.capture_request_hash,
                    "captureReceipt": None if self.capture_receipt is None else self.capture_receipt.to_map(),
                }
            ),
        }


@dataclass(frozen=True)
class AdmissionMarker:
    """A resend's way back to its admission: (conversation, `Idempotency-Key`) names the admission it made, for
    whom, and expires with it."""

    admission_id: str
    workspace_id: str
    user_id: str
    ttl: int

    @classmethod
    def of(cls, item: Item | None) -> AdmissionMarker | None:
        return None if item is None else cls(item["admissionId"], item["workspaceId"], item["userId"], int(item["ttl"]))

    def to_item(self, conversation_id: str, idempotency_key: str) -> Item:
        return {
            **keys.as_key(keys.admission_key(conversation_id, idempotency_key)),
            "admissionId": self.admission_id,
            "workspaceId": self.workspace_id,
            "userId": self.user_id,
            "ttl": self.ttl,
        }


@dataclass(frozen=True)
class CredentialSlot:
    """The conversation's one credential slot: the admission holding it and its credential's hash, until
    `expires_at`. Taking it retires every older turn of the conversation."""

    admission_id: str
    nonce_hash: str
    workspace_id: str
    expires_at: int
    ttl: int

    @classmethod
    def of(cls, item: Item | None) -> CredentialSlot | None:
        if item is None:
            return None
        return cls(
            admission_id=item["admissionId"],
            nonce_hash=item["nonceHash"],
            workspace_id=item["workspaceId"],
            expires_at=int(item["expiresAt"]),
            ttl=int(item["ttl"]),
        )

    def to_item(self, conversation_id: str) -> Item:
        return {
            **keys.as_key(keys.credential(conversation_id)),
            "admissionId": self.admission_id,
            "nonceHash": self.nonce_hash,
            "workspaceId": self.workspace_id,
            "expiresAt": self.expires_at,
            "ttl": self.ttl,
        }


@dataclass(frozen=True)
class ConversationOwner:
    """To whom a conversation answers: the (workspace, user) of its first admission, for good (no TTL)."""

    workspace_id: str
    user_id: str
    created_at: str

    @classmethod
    def of(cls, item: Item | None) -> ConversationOwner | None:
        return None if item is None else cls(item["workspaceId"], item["userId"], item["createdAt"])

    def to_item(self, conversation_id: str) -> Item:
        return {
            **keys.as_key(keys.conversation_owner(conversation_id)),
            "workspaceId": self.workspace_id,
            "userId": self.user_id,
            "createdAt": self.created_at,
        }


@dataclass(frozen=True)
class RecallReceiptRecord:
    """One model call's recall: status and revision, never text. `entries` and `selected` are the
    `entryId@revision` of each entry the index named and each entry selective recall handed the model."""

    admission_id: str
    workspace_id: str
    at: str
    status: RecallStatus
    ttl: int
    revision: int | None = None
    turn_id: str | None = None
    entries: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()

    @classmethod
    def from_item(cls, item: Item) -> RecallReceiptRecord:
        revision = item.get("revision")
        return cls(
            admission_id=item["admissionId"],
            workspace_id=item["workspaceId"],
            at=item["at"],
            status=RecallStatus(item["status"]),
            ttl=int(item["ttl"]),
            revision=None if revision is None else int(revision),
            turn_id=item.get("turnId"),
            entries=tuple(item.get("entries", ())),
            selected=tuple(item.get("selected", ())),
        )

    def to_item(self, conversation_id: str, at_ms: int, seq: str) -> Item:
        """Under the conversation, in the order of the calls (`at_ms`); `seq` tells apart two of one millisecond."""
        return {
            **keys.as_key(keys.receipt(conversation_id, at_ms, self.admission_id, seq)),
            **present(
                {
                    "admissionId": self.admission_id,
                    "workspaceId": self.workspace_id,
                    "at": self.at,
                    "status": self.status.value,
                    "ttl": self.ttl,
                    "revision": self.revision,
                    "turnId": self.turn_id,
                    "entries": list(self.entries) or None,
                    "selected": list(self.selected) or None,
                }
            ),
        }


@dataclass(frozen=True)
class NotesRecord:
    """A session's working notes: only the sealed text, its digest, size and revision (compare-and-set), the
    time of the write and a TTL every write pushes out."""

    workspace_id: str
    ciphertext: bytes
    sha256: str
    bytes: int
    revision: int
    updated_at: str | None
    ttl: int | None
    admission_id: str | None = None
    """The admission whose turn wrote this revision (ids only: the audit's link to the turn)."""

    @classmethod
    def of(cls, item: Item | None) -> NotesRecord | None:
        if item is None:
            return None
        ttl = item.get("ttl")
        return cls(
            workspace_id=item["workspaceId"],
            ciphertext=bytes(item["ciphertext"]),
            sha256=item.get("sha256", ""),
            bytes=int(item["bytes"]),
            revision=int(item["revision"]),
            updated_at=item.get("updatedAt"),
            ttl=None if ttl is None else int(ttl),
            admission_id=item.get("admissionId"),
        )

    def to_item(self, user_id: str, session_id: str) -> Item:
        return {
            **keys.as_key(keys.notes(self.workspace_id, user_id, session_id)),
            **present(
                {
                    "workspaceId": self.workspace_id,
                    "ciphertext": self.ciphertext,
                    "sha256": self.sha256,
                    "bytes": self.bytes,
                    "revision": self.revision,
                    "updatedAt": self.updated_at,
                    "ttl": self.ttl,
                    "admissionId": self.admission_id,
                }
            ),
        }

    def expired(self, now: float) -> bool:
        """Past its TTL: TTL deletion lags expiry (up to days), so every read judges it."""
        return self.ttl is not None and self.ttl <= now


def notes_revision(item: Item | None) -> int:
    """The revision a notes item holds (0: none): all a writer needs, without its record's other attributes."""
    return 0 if item is None else int(item["revision"])
