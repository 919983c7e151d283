"""The authority a turn holds right now, read in one consistent snapshot, and the fence that re-checks it.

Every tool of a turn (recall, capture, working notes, the agent's entry tools) starts from `read_authority`:
one transactional read of the admission, the conversation's credential slot, the workspace, the membership,
the policy, the head and the key session. Capture then commits with `fence_changes` (the admission's
consumption and `authority_checks`, which an agent's entry write uses alone): condition checks that re-state,
inside the write transaction, every predicate the snapshot was judged by, so whatever lands first wins cleanly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workspace_memory.document.policy import Mode, Policy
from workspace_memory.kernel.errors import ScopeNotGranted
from workspace_memory.kernel.terms import Predicate as Predicate
from workspace_memory.store import keys
from workspace_memory.store.changes import (
    DEFAULT_AGENT_DAYS,
    DEFAULT_HISTORY_DAYS,
    Change,
    ConsentIs,
    ConsumeAdmission,
    CredentialHeldBy,
    KeySessionLive,
    KeySessionNotRevoked,
    Label,
    MemberCanWrite,
    PolicyIs,
)
from workspace_memory.store.head import Head
from workspace_memory.store.ports import Cipher, Item, Table
from workspace_memory.store.turn_records import CaptureReceipt, CredentialSlot
from workspace_memory.store.workspace_records import KeySessionRecord, MemberRecord
from workspace_memory.turns.admission import Admission, AdmissionRef, InvalidAdmission
from workspace_memory.workspaces.access import Workspace, is_deleted
from workspace_memory.workspaces.key_binding import KeyBinding
from workspace_memory.workspaces.keysessions import Scope, binding_of


@dataclass(frozen=True)
class Authority:
    admission: Admission
    slot: CredentialSlot | None
    workspace: Workspace | None
    role: str | None
    policy: Policy
    head: Head
    key_session: KeySessionRecord | None
    revocation: Item | None
    """The session's revocation, if any: only its presence counts."""
    deleted: bool = False
    """The workspace is tombstoned (then `workspace` is None: every predicate of the turn fails)."""
    extra: tuple[Item | None, ...] = ()
    """The items a caller asked `read_authority` for beside the authority, from the same snapshot."""

    @property
    def history_days(self) -> int:
        """The workspace's retention as read in the snapshot (what a capture's base expires under)."""
        return DEFAULT_HISTORY_DAYS if self.workspace is None else self.workspace.history_days

    @property
    def agent_days(self) -> int:
        """The workspace's agent window as read in the snapshot (what an agent's entry write expires under)."""
        return DEFAULT_AGENT_DAYS if self.workspace is None else self.workspace.agent_days

    def has_access(self, now: float) -> bool:
        """Whether the turn may still read memory at all (recall's `no_access`)."""
        adm = self.admission
        return (
            adm.expires_at > now
            and self.workspace is not None
            and self.role is not None
            and self.workspace.ai_enabled
            and self.workspace.consent_revision == adm.consent_revision
            and self.key_session_valid(now)
        )

    def slot_holds(self, now: float) -> bool:
        slot = self.slot
        return (
            slot is not None
            and slot.admission_id == self.admission.id
            and slot.nonce_hash == self.admission.nonce_hash
            and slot.expires_at > now
        )

    def key_session_valid(self, now: float) -> bool:
        if self.admission.key_session_id is None:
            return True
        ks = self.key_session
        return ks is not None and self.revocation is None and ks.expires_at > now

    def can_write(self) -> bool:
        """The user still holds write right (the fence's `access` condition, judged on the snapshot)."""
        return self.workspace is not None and self.role in self.workspace.writer_roles()

    def binding(self, cipher: Cipher) -> KeyBinding | None:
        """The key session's binding as this snapshot read it (decisions/0077); None without a key session or for
        an unbound one. A session item never changes once opened, and every write re-states it live and not revoked
        in its own transaction, so judging a write on the snapshot's binding is judging it on the one at commit."""
        ks = self.key_session
        if self.admission.key_session_id is None or ks is None:
            return None
        return binding_of(cipher, self.admission.workspace_id, ks)

    def require_scope(self, scope: Scope) -> None:
        if scope not in self.admission.scopes:
            raise ScopeNotGranted(f"the key session behind this admission does not grant {scope.value}")

    def retired(self, now: float, *, consumed_ok: bool = False) -> Predicate | None:
        """The most fundamental predicate this admission no longer meets, judged before anything is decrypted
        (docs/architecture.md#a-retired-admission-reveals-nothing): a retired admission is refused with the predicate
        and learns nothing else. With `consumed_ok` (entry writes, which do not consume it) an admission its capture
        consumed still holds."""
        adm = self.admission
        policy = self.policy
        live = ("admitted", "committed") if consumed_ok else ("admitted",)
        failing = {
            Predicate.ADMISSION: adm.status not in live or adm.expires_at <= now,
            Predicate.CREDENTIAL: not self.slot_holds(now),
            Predicate.CONSENT: self.workspace is None
            or not self.workspace.ai_enabled
            or self.workspace.consent_revision != adm.consent_revision,
            Predicate.KEY_SESSION: not self.key_session_valid(now),
            Predicate.POLICY: policy.mode is not adm.mode
            or policy.revision != adm.policy_revision
            or policy.clear_generation != adm.clear_generation,
            Predicate.ACCESS: self.role is None or (adm.mode is Mode.AUTO and not self.can_write()),
        }
        return next((p for p in PREDICATE_PRIORITY if failing.get(p)), None)


def read_authority(
    table: Table, admission_id: str, workspace_id: str, credential: str, extra: Sequence[keys.Key] = ()
) -> Authority:
    """The turn's authority in one consistent read, with the `extra` items the caller needs beside it (the
    entries counter for a search: a warm index costs no second round trip)."""
    ref = AdmissionRef.parse(admission_id)
    ks_keys: list[keys.Key] = []
    if ref.key_session_id is not None:
        ks_keys = [
            keys.key_session(ref.workspace_id, ref.key_session_id),
            keys.key_revocation(ref.workspace_id, ref.key_session_id),
        ]
    items = table.get_many(
        [
            keys.admission(admission_id),
            keys.credential(ref.conversation_id),
            keys.meta(ref.workspace_id),
            keys.member(ref.workspace_id, ref.user_id),
            keys.policy(ref.workspace_id),
            keys.head(ref.workspace_id),
            *ks_keys,
            *extra,
        ]
    )
    admission_item, slot, meta, member, policy, head, *rest = items
    session, more = rest[: len(ks_keys)], rest[len(ks_keys) :]
    if admission_item is None:
        raise InvalidAdmission("admission not recognized")
    admission = Admission.from_item(admission_item)
    admission.authenticate(ref, workspace_id, credential)
    ks, revoked = session if session else (None, None)
    return Authority(
        admission=admission,
        slot=CredentialSlot.of(slot),
        workspace=Workspace.from_item(meta) if meta and not is_deleted(meta) else None,
        role=None if (membership := MemberRecord.of(member)) is None else membership.role.value,
        policy=Policy.from_item(policy),
        head=Head.from_item(head),
        key_session=KeySessionRecord.of(ks),
        revocation=revoked,
        deleted=meta is not None and is_deleted(meta),
        extra=tuple(more),
    )


def fence_changes(
    authority: Authority, now: float, receipt: CaptureReceipt, request_hash: str, history_days: int | None = None
) -> list[Change]:
    """The checks (and the admission's consumption) that re-state the turn's authority at commit; with
    `history_days`, the workspace check also re-states the retention the base's expiry was computed under."""
    adm = authority.admission
    consume = ConsumeAdmission(
        adm.id, adm.workspace_id, adm.user_id, Mode.AUTO.value, int(now), request_hash, receipt.to_map()
    )
    return [consume, *authority_checks(authority, now, Mode.AUTO, history_days)]


def authority_checks(
    authority: Authority,
    now: float,
    mode: Mode,
    history_days: int | None = None,
    *,
    writer: bool = True,
    agent_days: int | None = None,
) -> list[Change]:
    """The condition checks that re-state, at commit, every predicate a turn admitted in `mode` was judged by
    except the admission's own status (capture consumes it, an entry write checks it live): policy, consent
    (and retention, with the agent window an agent's entry write stamps its expiry from), credential slot, key
    session, and - with `writer` - the write right (without it the caller's own write names the member item: a
    transaction may touch an item once)."""
    adm = authority.admission
    ws = adm.workspace_id
    at = int(now)
    changes: list[Change] = [
        PolicyIs(ws, mode.value, adm.policy_revision, adm.clear_generation),
        ConsentIs(ws, adm.consent_revision, history_days, agent_days),
        CredentialHeldBy(adm.conversation_id, adm.id, adm.nonce_hash, at),
    ]
    if writer:
        changes.append(MemberCanWrite(ws, adm.user_id))
    if adm.key_session_id is not None:
        changes += [KeySessionLive(ws, adm.key_session_id, at), KeySessionNotRevoked(ws, adm.key_session_id)]
    return changes


PREDICATE_OF_LABEL: dict[str, Predicate] = {
    Label.ADMISSION: Predicate.ADMISSION,
    Label.POLICY: Predicate.POLICY,
    Label.CONSENT: Predicate.CONSENT,
    Label.CREDENTIAL: Predicate.CREDENTIAL,
    Label.KEY_SESSION: Predicate.KEY_SESSION,
    Label.ACCESS: Predicate.ACCESS,
    Label.VERSION: Predicate.HEAD,
    Label.HEAD: Predicate.HEAD,
}
"""How a failed change of the fence transaction reads as the predicate a refusal names."""


def failed_predicate(failed: frozenset[str]) -> Predicate:
    """The most fundamental predicate among the failed changes."""
    named = {PREDICATE_OF_LABEL[label] for label in failed}
    return next(p for p in PREDICATE_PRIORITY if p in named)


PREDICATE_PRIORITY = (
    Predicate.ADMISSION,
    Predicate.CREDENTIAL,
    Predicate.CONSENT,
    Predicate.KEY_SESSION,
    Predicate.POLICY,
    Predicate.ACCESS,
    Predicate.HEAD,
)
"""When several conditions fail together, the one named is the most fundamental."""
