"""Turn admission: freeze the authority a turn runs under, and hand it a delivery credential.

The admission records mode, policy revision, clear generation, consent revision, key session and the
client's own view of its saves, with a 15-minute expiry. In the same transaction a fresh credential takes
the conversation's single credential slot, which is what retires every older turn of the conversation.
The slot stores only a hash of the credential; the admission keeps it encrypted so that a resend with the
same idempotency key can hand back the same credential.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from workspace_memory.document.policy import Policy
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import (
    AiDisabled,
    Conflict,
    ConversationNotFound,
    Forbidden,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
)
from workspace_memory.kernel.ids import new_id, new_secret
from workspace_memory.kernel.terms import MemoryState as MemoryState
from workspace_memory.store import keys
from workspace_memory.store.changes import Change, ClaimConversation, ConsentIs, Create, Label, Put
from workspace_memory.store.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.store.turn_records import AdmissionMarker, AdmissionRecord, ConversationOwner, CredentialSlot
from workspace_memory.store.workspace_records import KeySessionRecord
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.workspaces.access import Caller, Workspace, load_caller
from workspace_memory.workspaces.keysessions import ALL_SCOPES, Scope, role_scopes

ADMISSION_TTL_SECONDS = 15 * 60
RETENTION_SECONDS = 24 * 3600
"""Admissions and slots outlive their expiry by a day (TTL), so late calls are refused, not unknown."""


class KeySessionInvalid(Forbidden):
    code = "KEY_SESSION_INVALID"


class KeySessionRequired(InvalidInput):
    """Agent runtimes act for a user only through that user's key session (docs/architecture.md#delegation)."""

    code = "KEY_SESSION_REQUIRED"


class InvalidAdmission(Forbidden):
    """Unknown admission, wrong workspace, or a credential that is not this admission's."""

    code = "INVALID_ADMISSION"


class ConversationBound(Conflict):
    """The caller's own conversation, bound to another of the caller's workspaces."""

    code = "CONVERSATION_WORKSPACE_MISMATCH"


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AdmissionRef:
    """What an admission id names. Ids carry it (`adm_<random>.<base64url json>`) so that recall and capture
    can read the admission, the credential slot, the member, policy, head and key session in ONE
    transactional read; the admission item itself stays authoritative and must agree with it."""

    conversation_id: str
    workspace_id: str
    user_id: str
    key_session_id: str | None

    def encode(self, random_part: str) -> str:
        payload = {"c": self.conversation_id, "w": self.workspace_id, "u": self.user_id}
        if self.key_session_id is not None:
            payload["k"] = self.key_session_id
        packed = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
        return f"{random_part}.{packed}"

    @classmethod
    def parse(cls, admission_id: str) -> AdmissionRef:
        head, _, packed = admission_id.partition(".")
        try:
            if not head.startswith("adm_") or len(admission_id) > 1024:
                raise ValueError(head)
            data = json.loads(base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4)))
            return cls(str(data["c"]), str(data["w"]), str(data["u"]), data.get("k"))
        except (ValueError, KeyError, TypeError, UnicodeError):
            raise InvalidAdmission("admission not recognized") from None


@dataclass(frozen=True)
class Admission(AdmissionRecord):
    """An admission as a turn holds it (its stored attributes are `AdmissionRecord`'s)."""

    @property
    def expires_at_iso(self) -> str:
        return iso(self.expires_at)

    def authenticate(self, ref: AdmissionRef, workspace_id: str, credential: str) -> None:
        """The presented credential must be this admission's, for this workspace, as its id claims."""
        claimed = (ref.conversation_id, ref.workspace_id, ref.user_id, ref.key_session_id)
        actual = (self.conversation_id, self.workspace_id, self.user_id, self.key_session_id)
        if claimed != actual or self.workspace_id != workspace_id or self.nonce_hash != credential_hash(credential):
            raise InvalidAdmission("admission not recognized")


@dataclass(frozen=True)
class Admitted:
    admission: Admission
    credential: str
    replayed: bool


def credential_context(workspace_id: str, admission_id: str) -> dict[str, str]:
    """The credential is the workspace's data too: under its branch key, so deleting the workspace shreds it."""
    return {"workspace": workspace_id, "kind": "credential", "admission": admission_id}


def message_context(workspace_id: str, admission_id: str) -> dict[str, str]:
    """The turn's message is the workspace's data: under its branch key, shredded with the workspace."""
    return {"workspace": workspace_id, "kind": "turn-message", "admission": admission_id}


def turn_message(cipher: Cipher, admission: Admission) -> str | None:
    """The user message the turn was admitted with (None when the admission was given none)."""
    if admission.message_ciphertext is None:
        return None
    return cipher.decrypt(admission.message_ciphertext, message_context(admission.workspace_id, admission.id)).decode()


class AdmissionService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

    def admit(self, request: AdmissionRequest, *, turn_id: str | None = None) -> Admitted:
        """Admit a turn under the user's own authority (the human route); a key session narrows it. `turn_id`
        is the workflow ingress runs the turn as (an agent runtime's own admission has none)."""
        workspace_id, user_id, key_session_id = request.workspace_id, request.user_id, request.key_session_id
        extra = [
            keys.policy(workspace_id),
            keys.conversation_owner(request.conversation_id),
            keys.admission_key(request.conversation_id, request.idempotency_key),
        ]
        if key_session_id is not None:
            extra += [keys.key_session(workspace_id, key_session_id), keys.key_revocation(workspace_id, key_session_id)]
        caller, (policy_item, owner, marker_item, *session) = load_caller(self._table, workspace_id, user_id, extra)
        _check_owner(ConversationOwner.of(owner), workspace_id, user_id)
        scopes = ALL_SCOPES
        if key_session_id is not None:  # a resend too: a revoked delegation hands nothing back
            # what the session grants, narrowed to what the role delegates now (a member lowered to viewer)
            scopes = self._check_key_session(user_id, self._clock.now(), *session) & role_scopes(caller.role)
        marker = AdmissionMarker.of(marker_item)
        if marker is not None:
            return self._replay(marker, workspace_id, user_id, key_session_id)
        if not caller.workspace.ai_enabled:
            raise AiDisabled("workspace AI is turned off")
        return self._create(_Grant(caller, Policy.from_item(policy_item), scopes), request, turn_id)

    def admit_for_runtime(self, request: AdmissionRequest) -> Admitted:
        """An agent runtime acts for the request's user only under a live key session that user opened here."""
        if request.key_session_id is None:
            raise KeySessionRequired(
                "automation admissions need the user's keySessionId (docs/architecture.md#delegation)"
            )
        return self.admit(request)

    @staticmethod
    def _check_key_session(user_id: str, now: float, item: Item | None, revoked: Item | None) -> frozenset[Scope]:
        session = KeySessionRecord.of(item)
        if session is None or revoked is not None or session.expires_at <= now:
            raise KeySessionInvalid("key session is unknown, expired or revoked")
        if session.opened_by != user_id:
            raise KeySessionInvalid("key session belongs to another user")
        return ALL_SCOPES if session.scopes is None else session.scopes  # one from before scopes grants all

    def _create(self, grant: _Grant, request: AdmissionRequest, turn_id: str | None) -> Admitted:
        """A new admission with a fresh credential, written in one transaction with what it claims."""
        ref = AdmissionRef(request.conversation_id, grant.workspace.id, grant.caller.user_id, request.key_session_id)
        admission_id = ref.encode(new_id("adm"))
        credential = new_secret()
        admission = self._admission(admission_id, credential, grant, request, turn_id)
        try:
            self._table.transact(_claims(admission, grant, request))
        except TransactionCancelled as exc:
            replayed = self._after_lost_race(exc.failed(), grant, request)
            if replayed is None:
                raise
            return replayed
        return Admitted(admission, credential, replayed=False)

    def _admission(
        self, admission_id: str, credential: str, grant: _Grant, request: AdmissionRequest, turn_id: str | None
    ) -> Admission:
        """The admission: the authority it freezes, the credential (its hash, and sealed for a resend), what the
        request brought along (the message sealed) and its 15-minute lifetime."""
        workspace, policy = grant.workspace, grant.policy
        now = self._clock.now()
        expires = int(now) + ADMISSION_TTL_SECONDS
        message = request.message
        return Admission(
            id=admission_id,
            conversation_id=request.conversation_id,
            workspace_id=workspace.id,
            user_id=grant.caller.user_id,
            mode=policy.mode,
            policy_revision=policy.revision,
            clear_generation=policy.clear_generation,
            consent_revision=workspace.consent_revision,
            scopes=grant.scopes,
            nonce_hash=credential_hash(credential),
            credential_ciphertext=self._cipher.encrypt(
                credential.encode(), credential_context(workspace.id, admission_id)
            ),
            expires_at=expires,
            status="admitted",
            created_at=iso(now),
            ttl=expires + RETENTION_SECONDS,
            key_session_id=request.key_session_id,
            session_id=request.session_id,
            memory_state=request.memory_state,
            turn_id=turn_id,
            message_ciphertext=None
            if message is None
            else self._cipher.encrypt(message.encode("utf-8"), message_context(workspace.id, admission_id)),
        )

    def _after_lost_race(self, failed: frozenset[str], grant: _Grant, request: AdmissionRequest) -> Admitted | None:
        """What a cancelled admission transaction answers: the conversation claimed by someone else, the
        admission of a concurrent resend that won, or consent that moved; None when it was none of those."""
        workspace_id, user_id = grant.workspace.id, grant.caller.user_id
        conversation_id = request.conversation_id
        if Label.OWNER in failed:  # another admission claimed the conversation first
            owner = ConversationOwner.of(self._table.get(*keys.conversation_owner(conversation_id)))
            _check_owner(owner, workspace_id, user_id)
        if Label.IDEMPOTENCY in failed:  # a concurrent resend with the same key won: hand back its admission
            stored = AdmissionMarker.of(self._table.get(*keys.admission_key(conversation_id, request.idempotency_key)))
            if stored is not None:
                return self._replay(stored, workspace_id, user_id, request.key_session_id)
        if Label.CONSENT in failed:
            raise AiDisabled("workspace AI was turned off or consent changed; try again") from None
        return None

    def _replay(self, marker: AdmissionMarker, workspace_id: str, user_id: str, key_session_id: str | None) -> Admitted:
        if marker.workspace_id != workspace_id or marker.user_id != user_id:
            raise IdempotencyKeyReused("idempotency key already used for another workspace or user")
        item = self._table.get(*keys.admission(marker.admission_id))
        if item is None:
            raise NotFound("admission expired")
        admission = Admission.from_item(item)
        if admission.key_session_id != key_session_id:
            raise IdempotencyKeyReused("idempotency key already used under another key session")
        credential = self._cipher.decrypt(
            admission.credential_ciphertext, credential_context(admission.workspace_id, admission.id)
        ).decode()
        return Admitted(admission, credential, replayed=True)


@dataclass(frozen=True)
class _Grant:
    """What the admission was judged to be granted: the caller (workspace and membership), the policy it
    freezes and the scopes of its key session (all of them without one)."""

    caller: Caller
    policy: Policy
    scopes: frozenset[Scope]

    @property
    def workspace(self) -> Workspace:
        return self.caller.workspace


def _claims(admission: Admission, grant: _Grant, request: AdmissionRequest) -> list[Change]:
    """The admission's transaction: its idempotency marker (a resend finds it), the admission, the
    conversation's one credential slot (taking it retires every older turn), the conversation's owner (the first
    admission claims it) and the consent revision the admission was judged by."""
    workspace = grant.workspace
    conversation_id, admission_id, ttl = request.conversation_id, admission.id, admission.ttl
    marker = AdmissionMarker(admission_id, workspace.id, grant.caller.user_id, ttl)
    slot = CredentialSlot(admission_id, admission.nonce_hash, workspace.id, admission.expires_at, ttl)
    owner = ConversationOwner(workspace.id, grant.caller.user_id, admission.created_at)
    return [
        Create(marker.to_item(conversation_id, request.idempotency_key), Label.IDEMPOTENCY),
        Create(admission.to_item(), Label.ADMISSION),
        Put(slot.to_item(conversation_id), Label.CREDENTIAL),
        ClaimConversation(owner.to_item(conversation_id)),
        ConsentIs(workspace.id, workspace.consent_revision),
    ]


def _check_owner(owner: ConversationOwner | None, workspace_id: str, user_id: str) -> None:
    """A conversation answers to the (workspace, user) of its first admission, and to no one else."""
    if owner is None:
        return
    if owner.user_id != user_id:
        raise ConversationNotFound("conversation not found")
    if owner.workspace_id != workspace_id:
        raise ConversationBound("this conversation belongs to another of your workspaces")
