"""Automatic capture: the agent's only way to write memory, and proposals for humans to apply.

In `auto` an edit commits only through the fence: one transaction that creates the version, moves the head
from exactly the base the agent saw, consumes the admission, and re-checks every predicate the turn was
admitted under. In `read_only` the same edits come back as a proposal stamped with the clear generation; in
`off` nothing happens. A version conflict never rebases: the change comes back as a proposal against the
newer text, which stays untouched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import TypeAdapter

from workspace_memory.document.commit import (
    Commit,
    PreparedVersion,
    commit_version,
    prepare_version,
    transact_under_retention,
    version_changes,
)
from workspace_memory.document.edits import MALFORMED_EDITS, Edit, EditsRejected, apply_edits, rewrite_written
from workspace_memory.document.edits import InvalidEdits as InvalidEdits
from workspace_memory.document.policy import Mode, Policy
from workspace_memory.document.service import RECALL_MAX_BYTES
from workspace_memory.document.versions import Op, head_text
from workspace_memory.governance.redaction import Finding, findings, merge_findings, redact_written
from workspace_memory.kernel import metrics
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.errors import Conflict, Forbidden, InvalidInput, StaleBaseVersion
from workspace_memory.kernel.metrics import Metric, Operation
from workspace_memory.kernel.terms import Outcome as Outcome
from workspace_memory.store import keys
from workspace_memory.store.changes import Change, ClearGenerationIs, Label
from workspace_memory.store.head import Head
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.stale import stale_base
from workspace_memory.store.turn_records import CaptureReceipt
from workspace_memory.turns.authority import Authority, Predicate, failed_predicate, fence_changes, read_authority
from workspace_memory.workspaces.access import Workspace, load_caller
from workspace_memory.workspaces.keysessions import Scope

EDITS = TypeAdapter(list[Edit])


class ProposalCleared(Conflict):
    """The proposal was made before a Clear: applying it would resurrect cleared memory."""

    code = "PROPOSAL_CLEARED"


@dataclass(frozen=True)
class Proposal:
    edits: list[dict[str, Any]]
    base_version: int
    clear_generation: int


@dataclass(frozen=True)
class CaptureResult:
    outcome: Outcome
    version: int | None = None
    predicate: Predicate | None = None
    proposal: Proposal | None = None
    receipt: CaptureReceipt | None = None
    replayed: bool = False
    current: bool | None = None
    """On a replay only: whether its version is still the document's head (a later write moved it if not)."""
    detail: dict[str, Any] = field(default_factory=dict)
    redactions: tuple[Finding, ...] = ()
    """What redaction removed from the edits' text, per kind (counts only)."""


def parse_edits(raw: Sequence[Any]) -> list[Edit]:
    """A proposal's edits as a human applies them (a capture's are typed by its request model)."""
    try:
        return EDITS.validate_python(list(raw))
    except ValueError:
        raise InvalidEdits(MALFORMED_EDITS) from None


def request_hash(edits: Sequence[Edit], base_version: int) -> str:
    canonical = json.dumps(
        {"edits": [e.model_dump(exclude_none=True) for e in edits], "baseVersion": base_version},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def redact_edits(edits: Sequence[Edit]) -> tuple[list[Edit], tuple[Finding, ...]]:
    """The edits with the text they write redacted (docs/architecture.md#redaction: agent-authored text loses personal
    data and secrets before it is stored or proposed), and what was removed; the text they match is left alone."""
    found: list[tuple[Finding, ...]] = []

    def rewrite(text: str) -> str:
        redacted = redact_written(text)
        found.append(redacted.findings)
        return redacted.text

    rewritten = [rewrite_written(edit, rewrite) for edit in edits]
    return rewritten, merge_findings(found)


def _apply(text: str, edits: Sequence[Edit]) -> str:
    try:
        return apply_edits(text, edits).text
    except EditsRejected as exc:
        raise InvalidEdits("edits rejected", problems=list(exc.problems)) from None


class CaptureService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

    def capture(
        self,
        workspace_id: str,
        admission_id: str,
        credential: str,
        edits: Sequence[Edit],
        base_version: int,
        idempotency_key: str | None,
    ) -> CaptureResult:
        if idempotency_key != f"memory:{admission_id}":
            raise InvalidInput("Idempotency-Key must be memory:<admissionId>")
        digest = request_hash(edits, base_version)  # of the request as sent, so a retry of it replays
        redacted, redactions = redact_edits(edits)
        result = self._capture(workspace_id, admission_id, credential, redacted, base_version, digest)
        if result.predicate is not None:  # refused, or a conflict on the head: the fence decided
            metrics.count(Metric.FENCE_REFUSAL, operation=Operation.CAPTURE, predicate=result.predicate)
        return result if result.outcome is Outcome.REFUSED else replace(result, redactions=redactions)

    def _capture(
        self,
        workspace_id: str,
        admission_id: str,
        credential: str,
        edits: list[Edit],
        base_version: int,
        digest: str,
    ) -> CaptureResult:
        authority = read_authority(self._table, admission_id, workspace_id, credential)
        authority.require_scope(Scope.MEMORY_WRITE)
        replay = self._replay(authority, digest)
        if replay is not None:
            return replay
        now = self._clock.now()
        # A retired admission is refused before the head is decrypted or the edits are tried against it, so
        # it cannot be used to probe the text (docs/architecture.md#a-retired-admission-reveals-nothing). The fence
        # re-checks every predicate anyway.
        retired = authority.retired(now)
        if retired is not None:
            return CaptureResult(Outcome.REFUSED, predicate=retired)
        mode = authority.admission.mode
        if mode is Mode.OFF:
            return CaptureResult(Outcome.NOOP)
        head = authority.head
        current = head_text(self._cipher, workspace_id, head)
        if base_version != head.version:
            # The edits were computed on another text than the one read here: never apply them to it.
            return self._conflict(edits, head, authority.policy, current)
        if mode is Mode.READ_ONLY:
            _apply(current, edits)  # a proposal must apply to the text it is stamped against
            return CaptureResult(Outcome.PROPOSAL, proposal=self._proposal(edits, head, authority.policy))
        # From here the transaction decides: a competing event that lands between the read and the write is
        # named by the cancellation reasons.
        if head.bytes > RECALL_MAX_BYTES:
            return CaptureResult(Outcome.REFUSED, predicate=Predicate.OVERSIZED)
        updated = _apply(current, edits)
        if updated == current:
            return CaptureResult(Outcome.NOOP, version=head.version)
        if len(updated.encode("utf-8")) > RECALL_MAX_BYTES:
            return CaptureResult(Outcome.REFUSED, predicate=Predicate.OVERSIZED)
        # The fence judges time as of the commit, not the snapshot: expiry in between retires the edit.
        return self._commit(authority, credential, updated, head.version, digest, self._clock.now(), edits)

    def _commit(
        self,
        authority: Authority,
        credential: str,
        updated: str,
        base: int,
        digest: str,
        now: float,
        edits: Sequence[Edit],
    ) -> CaptureResult:
        adm = authority.admission
        prepared = prepare_version(
            self._cipher,
            adm.workspace_id,
            content=updated,
            base=base,
            op=Op.CAPTURE,
            author=adm.user_id,
            now=now,
            admission_id=adm.id,
            turn_id=adm.turn_id,
        )
        info = prepared.info
        receipt = CaptureReceipt(adm.id, info.version, info.ciphertext_sha256, info.bytes, info.created_at)
        try:
            self._fence(authority, prepared, base, now, receipt, digest)
        except TransactionCancelled as exc:
            predicate = failed_predicate(exc.failed())
            if predicate is Predicate.ADMISSION:
                # A concurrent identical request may have committed: replay it rather than refuse.
                again = read_authority(self._table, adm.id, adm.workspace_id, credential)
                replay = self._replay(again, digest)
                if replay is not None:
                    return replay
            if predicate is Predicate.HEAD:  # against the head the fence lost to, as a Save's 409 names it
                key = keys.head(adm.workspace_id)
                fresh = Head.from_item(exc.seen(key) if exc.saw(key) else self._table.get(*key))
                return self._conflict(edits, fresh, authority.policy, head_text(self._cipher, adm.workspace_id, fresh))
            return CaptureResult(Outcome.REFUSED, predicate=predicate)
        return CaptureResult(Outcome.COMMITTED, version=prepared.info.version, receipt=receipt)

    def _fence(
        self,
        authority: Authority,
        prepared: PreparedVersion,
        base: int,
        now: float,
        receipt: CaptureReceipt,
        digest: str,
    ) -> None:
        """The fence transaction, with the base's expiry under the retention of the snapshot (re-checked inside
        the fence's one check of the workspace item). If that check failed while workspace AI and the consent
        revision still hold, only the retention moved: commit once more under the fresh one."""
        adm = authority.admission

        def changes(days: int) -> list[Change]:
            return [*version_changes(prepared, base, days), *fence_changes(authority, now, receipt, digest, days)]

        def moved(exc: TransactionCancelled) -> int | None:
            if exc.failed() != {Label.CONSENT}:
                return None
            meta = self._table.get(*keys.meta(adm.workspace_id))
            workspace = None if meta is None else Workspace.from_item(meta)
            if workspace is None or not workspace.ai_enabled or workspace.consent_revision != adm.consent_revision:
                return None
            return workspace.history_days

        transact_under_retention(self._table, changes, authority.history_days, moved)

    def _replay(self, authority: Authority, digest: str) -> CaptureResult | None:
        adm = authority.admission
        if adm.status != "committed":
            return None
        if adm.capture_request_hash != digest or adm.capture_receipt is None:
            return CaptureResult(Outcome.REFUSED, predicate=Predicate.ADMISSION)
        receipt = adm.capture_receipt
        head = authority.head  # read in the same snapshot as the admission: the answer costs no other read
        current = not head.tombstone and head.version == receipt.version
        version = receipt.version
        return CaptureResult(Outcome.COMMITTED, version=version, receipt=receipt, replayed=True, current=current)

    def _conflict(self, edits: Sequence[Edit], head: Head, policy: Policy, current: str) -> CaptureResult:
        try:
            _apply(current, edits)
        except InvalidEdits:
            return CaptureResult(Outcome.CONFLICT, predicate=Predicate.HEAD, version=head.version)
        return CaptureResult(
            Outcome.CONFLICT,
            predicate=Predicate.HEAD,
            version=head.version,
            proposal=self._proposal(edits, head, policy),
        )

    @staticmethod
    def _proposal(edits: Sequence[Edit], head: Head, policy: Policy) -> Proposal:
        return Proposal([e.model_dump(exclude_none=True) for e in edits], head.version, policy.clear_generation)

    # -- humans applying a proposal -------------------------------------------------------------

    def apply_proposal(
        self, user_id: str, workspace_id: str, raw_edits: Sequence[Any], clear_generation: int, base: int
    ) -> Commit:
        """A member with write right applies a proposal as a normal Save; one made before a Clear is refused."""
        edits = parse_edits(raw_edits)
        caller, (policy_item, head_item) = load_caller(
            self._table, workspace_id, user_id, [keys.policy(workspace_id), keys.head(workspace_id)]
        )
        caller.require_write()
        policy = Policy.from_item(policy_item)
        if policy.clear_generation != clear_generation:
            raise ProposalCleared("the memory was cleared after this proposal was made")
        head = Head.from_item(head_item)
        if head.version != base:
            raise StaleBaseVersion(f"base version {base} is not the current version", current_version=head.version)
        updated = _apply(head_text(self._cipher, workspace_id, head), edits)
        prepared = prepare_version(
            self._cipher, workspace_id, content=updated, base=base, op=Op.SAVE, author=user_id, now=self._clock.now()
        )
        # The generation seen must still hold when the write lands (a Clear creates the row if absent).
        seen = None if policy_item is None else clear_generation
        others: list[Change] = [caller.still_writer(), ClearGenerationIs(workspace_id, seen)]
        try:
            commit_version(self._table, prepared, base, caller.workspace.history_days, others)
        except TransactionCancelled as exc:
            failed = exc.failed()
            if Label.CLEAR_GENERATION in failed:
                raise ProposalCleared("the memory was cleared after this proposal was made") from None
            if Label.ACCESS in failed:  # as Save answers a lost write right
                raise Forbidden("write access to this workspace's memory is not granted to your role") from None
            raise stale_base(exc, workspace_id, base) from None
        return Commit(prepared.info, warnings=findings(updated))
