"""The agent's side of memory entries (docs/architecture.md#agent-entry-writes): `save_memory`,
`forget_memory`, `verify_memory`; the reads (`read_memory`, `search_memory`, the list) are in agent_reads.py.

A save is judged on the turn's authority, read in one snapshot as capture reads it, and commits through the
fence: the entry's writes and condition checks re-stating every admission predicate (admission live, policy
mode/revision/clear generation, consent and retention, credential slot, key session, write right) in ONE
transaction, so a competing Clear, mode change, revocation or newer turn either lands before (the save is
refused with its predicate, nothing written) or after (the save is committed). Unlike capture it does not
consume the admission: a turn may save several memories, bounded by the agent write rate. In `read_only` the
save becomes a candidate through the same fence; in `off` nothing happens. Agent text is redacted before it
is stored. A rule needs a quote of the turn's user message, kept sealed on the admission, and says no more
than it (`rule_quotes`).

`forget_memory` is never automatic: in `read_only` and `auto` alike it becomes a candidate of kind `forget`
(through the same fence as a save in that mode, rate limited and idempotent like one) that a member with write
right on the entry's scope accepts or rejects; in `off` nothing happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workspace_memory.document.policy import Mode
from workspace_memory.entries.agent_reads import AgentEntryReads
from workspace_memory.entries.agent_results import SaveResult, caller_of, request_hash, write_headers
from workspace_memory.entries.agent_verify import verify_attempt, verify_headers
from workspace_memory.entries.bound import require_visible
from workspace_memory.entries.limits import RateRaced
from workspace_memory.entries.model import Author, Draft, PossibleConflict, Source
from workspace_memory.entries.refusals import Fenced
from workspace_memory.entries.rule_quotes import check_quote
from workspace_memory.entries.validation import redacted, validate
from workspace_memory.kernel import metrics
from workspace_memory.kernel.clock import iso
from workspace_memory.kernel.errors import (
    IdempotencyKeyReused,
    InvalidInput,
    WorkspaceNotFound,
)
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.metrics import Metric, Operation
from workspace_memory.kernel.terms import EntryScope, EntryType, Outcome
from workspace_memory.store import keys
from workspace_memory.store.changes import AdmissionLive, Change, Create, Label
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.entry_saves import SavedAnswer, SaveMarker
from workspace_memory.turns.admission import RETENTION_SECONDS, Admission, turn_message
from workspace_memory.turns.authority import Authority, Predicate, authority_checks, failed_predicate, read_authority
from workspace_memory.workspaces.access import Workspace
from workspace_memory.workspaces.key_binding import KeyBinding
from workspace_memory.workspaces.keysessions import Scope


class AgentEntryService(AgentEntryReads):
    """The agent's entry writes, beside its reads (agent_reads.py)."""

    # -- save_memory -------------------------------------------------------------------------------------

    def save(
        self,
        workspace_id: str,
        admission_id: str | None,
        credential: str | None,
        draft: Draft,
        quote: str | None,
        body: dict[str, Any],
        idempotency_key: str | None,
    ) -> SaveResult:
        """`body` is the request as sent (its hash decides whether a reused `Idempotency-Key` replays)."""
        admission, secret, key = write_headers(admission_id, credential, idempotency_key)
        if draft.scope is EntryScope.MEMBER and draft.agent is not None:
            raise InvalidInput("agent applies to agent-scope entries only")
        validate(draft)
        digest = request_hash(body)
        return self._judged(
            workspace_id,
            admission,
            secret,
            lambda authority: self._attempt(authority, draft, quote, digest, key),
            extra=[keys.entry_counter(workspace_id)],  # the contradiction check's index, in the same read
        )

    def _judged(
        self,
        workspace_id: str,
        admission_id: str,
        credential: str,
        attempt: Callable[[Authority], SaveResult | None],
        extra: Sequence[keys.Key] = (),
    ) -> SaveResult:
        """An agent write judged on a fresh snapshot of the turn's authority (`memory:write`), at most three
        times while only the retention or the key session's write window moves under it."""
        raced: RateRaced | None = None
        for _ in range(3):
            authority = read_authority(self._table, admission_id, workspace_id, credential, extra)
            authority.require_scope(Scope.MEMORY_WRITE)
            try:
                result = attempt(authority)
            except RateRaced as exc:
                raced = exc
                continue
            except WorkspaceNotFound:  # deleted while judged (its META gone): refused, as the fence refuses it
                return _counted(SaveResult(Outcome.REFUSED, predicate=Predicate.CONSENT))
            if result is not None:
                return _counted(result)
            raced = None
        if raced is not None:
            raise raced
        return _counted(SaveResult(Outcome.REFUSED, predicate=Predicate.CONSENT))

    def _opening(
        self, authority: Authority, digest: str, idempotency_key: str
    ) -> tuple[keys.Key, float, SaveResult | None]:
        """What every agent write checks first: its marker (a replay answers the first result), then the
        admission (a retired one is refused before anything is decrypted), then `off` (nothing happens)."""
        adm = authority.admission
        marker_key = keys.entry_save(adm.workspace_id, request_hash({"a": adm.id, "k": idempotency_key}))
        now = self._clock.now()
        replay = self._replay(marker_key, digest)
        if replay is not None:
            return marker_key, now, replay
        retired = authority.retired(now, consumed_ok=True)
        if retired is not None:
            return marker_key, now, SaveResult(Outcome.REFUSED, predicate=retired)
        if adm.mode is Mode.OFF:
            return marker_key, now, SaveResult(Outcome.NOOP)
        return marker_key, now, None

    def _attempt(
        self, authority: Authority, draft: Draft, quote: str | None, digest: str, idempotency_key: str
    ) -> SaveResult | None:
        """One judgement and commit; None when only the retention moved under it (judge again)."""
        adm = authority.admission
        marker_key, now, early = self._opening(authority, digest, idempotency_key)
        if early is not None:
            return early
        mode = adm.mode
        binding = authority.binding(self._cipher)  # outside it: refused before anything is written (0077)
        if binding is not None:
            binding.require(draft.scope, draft.type, draft.text.key)
        if draft.type is EntryType.RULE:
            check_quote(quote, turn_message(self._cipher, adm), draft.text)
        stored, redactions = redacted(draft)
        author = Author(adm.user_id, "agent", adm.id, rated=True)
        days = authority.history_days
        # what a forget blocked (a cited source, this turn) refuses the save in its own transaction
        unblocked = self._entries.not_forgotten(adm.workspace_id, stored.text.sources, adm.id, now)
        # What it may contradict, among what whoever decides its candidate may read (decisions/0087)
        (counter,) = authority.extra
        shared = stored.scope is not EntryScope.MEMBER
        checked = self._entries.write_check.check(
            caller_of(authority), counter, stored, shared_only=shared, within=binding
        )
        stored, conflicts = checked[0], checked[1] or ()
        try:
            if mode is Mode.READ_ONLY or conflicts:  # never a silent second truth: a person decides
                candidate_id = new_id("ec")
                answer = SavedAnswer(Outcome.PROPOSAL, candidate_id=candidate_id, possible_conflicts=_cited(conflicts))
                self._entries.propose(
                    adm.user_id,
                    adm.workspace_id,
                    stored,
                    admission_id=adm.id,
                    fence=[
                        self._marker(marker_key, digest, adm, answer),
                        AdmissionLive(adm.id, adm.workspace_id, adm.user_id, mode.value, int(now)),
                        *authority_checks(authority, now, mode, writer=False),
                        *unblocked,
                    ],
                    candidate_id=candidate_id,
                    possible_conflicts=conflicts,
                )
                return SaveResult(
                    Outcome.PROPOSAL, candidate_id=candidate_id, redactions=redactions, possible_conflicts=conflicts
                )
            written = self._entries.create_fenced(
                caller_of(authority),
                stored,
                author,
                [
                    AdmissionLive(adm.id, adm.workspace_id, adm.user_id, Mode.AUTO.value, int(now)),
                    *authority_checks(authority, now, Mode.AUTO, days, agent_days=authority.agent_days),
                    *unblocked,
                ],
                guard=lambda head: self._guard_rule(head, quote, adm, draft, binding),
                answer=lambda made: self._marker(
                    marker_key,
                    digest,
                    adm,
                    SavedAnswer(Outcome.COMMITTED, made.superseded, made.entry_id, made.revision),
                ),
            )
        except Fenced as exc:
            return self._fenced(exc.failed, authority, marker_key, digest)
        return SaveResult(
            Outcome.COMMITTED, written.entry_id, written.revision, superseded=written.superseded, redactions=redactions
        )

    # -- forget_memory -----------------------------------------------------------------------------------

    def forget(
        self,
        workspace_id: str,
        admission_id: str | None,
        credential: str | None,
        entry_id: str,
        idempotency_key: str | None,
    ) -> SaveResult:
        """A proposal to forget `entry_id` (a candidate of kind `forget`), never the forget itself: a member with
        write right on the entry's scope accepts or rejects it. `off`: nothing. An entry the admission's user
        may not see answers as a missing one (404)."""
        admission, secret, key = write_headers(admission_id, credential, idempotency_key)
        digest = request_hash({"forget": entry_id})
        return self._judged(
            workspace_id, admission, secret, lambda authority: self._propose_forget(authority, entry_id, digest, key)
        )

    def _propose_forget(
        self, authority: Authority, entry_id: str, digest: str, idempotency_key: str
    ) -> SaveResult | None:
        adm = authority.admission
        marker_key, now, early = self._opening(authority, digest, idempotency_key)
        if early is not None:
            return early
        # The fence of a save in the admission's mode: `auto` re-states the write right, `read_only` membership.
        auto = adm.mode is Mode.AUTO
        candidate_id = new_id("ec")
        answer = SavedAnswer(Outcome.PROPOSAL, entry_id=entry_id, candidate_id=candidate_id)
        fence = [
            self._marker(marker_key, digest, adm, answer),
            AdmissionLive(adm.id, adm.workspace_id, adm.user_id, adm.mode.value, int(now)),
            *authority_checks(authority, now, adm.mode, writer=auto),
        ]
        try:
            self._entries.propose_forget(
                caller_of(authority),
                entry_id,
                adm.id,
                fence,
                member_check=not auto,
                candidate_id=candidate_id,
                guard=require_visible(authority.binding(self._cipher), self._cipher, adm.workspace_id),
            )
        except Fenced as exc:
            return self._fenced(exc.failed, authority, marker_key, digest)
        return SaveResult(Outcome.PROPOSAL, entry_id=entry_id, candidate_id=candidate_id)

    def _guard_rule(
        self, head: EntryRecord, quote: str | None, adm: Admission, draft: Draft, binding: KeyBinding | None
    ) -> None:
        """Changing a rule (superseding it through its key) needs the quote as creating one does, and the new
        revision must say no more than it. A bound session supersedes only a head inside its binding."""
        if binding is not None:
            binding.require(head.scope, head.type, draft.text.key)
        if head.type is EntryType.RULE:
            check_quote(quote, turn_message(self._cipher, adm), draft.text)

    def _fenced(
        self, failed: frozenset[str], authority: Authority, marker_key: keys.Key, digest: str
    ) -> SaveResult | None:
        if Label.IDEMPOTENCY in failed:  # a concurrent identical request won: its answer is this one's
            replay = self._replay(marker_key, digest)
            if replay is not None:
                return replay
        if failed == {Label.CONSENT}:
            adm = authority.admission
            meta = self._table.get(*keys.meta(adm.workspace_id))
            workspace = None if meta is None else Workspace.from_item(meta)
            if workspace is not None and workspace.ai_enabled and workspace.consent_revision == adm.consent_revision:
                return None  # only the retention moved: judge again under the fresh one
        named = failed - {Label.IDEMPOTENCY}
        return SaveResult(Outcome.REFUSED, predicate=failed_predicate(named or frozenset({Label.ADMISSION})))

    # -- idempotency -----------------------------------------------------------------------------------

    def _marker(self, key: keys.Key, digest: str, adm: Admission, answer: SavedAnswer) -> Change:
        """Created in the write's own transaction with its answer (ids only): the same `Idempotency-Key` cannot
        write twice, and whatever happens after the commit, a replay hands back what the first one wrote."""
        marker = SaveMarker(key, adm.id, digest, answer, iso(self._clock.now()), adm.expires_at + RETENTION_SECONDS)
        return Create(marker.to_item(), Label.IDEMPOTENCY)

    def _replay(self, key: keys.Key, digest: str) -> SaveResult | None:
        item = self._table.get(*key)
        if item is None:
            return None
        marker = SaveMarker.from_item(item)
        if marker.request_hash != digest:
            raise IdempotencyKeyReused("Idempotency-Key already used for another entry write of this admission")
        return SaveResult.replay(marker.answer)

    # -- verify_memory ---------------------------------------------------------------------------------

    def verify(
        self,
        workspace_id: str,
        admission_id: str | None,
        credential: str | None,
        entry_id: str,
        revision: int,
        evidence: Sequence[Source],
    ) -> SaveResult:
        """Revision `revision` of `entry_id` verified by the admission's agent on `evidence` (agent_verify.py)."""
        admission, secret = verify_headers(admission_id, credential, evidence)
        return self._judged(
            workspace_id,
            admission,
            secret,
            lambda authority: verify_attempt(
                self._entries, self._cipher, self._clock, authority, entry_id, revision, evidence
            ),
        )


def _cited(conflicts: Sequence[PossibleConflict]) -> tuple[str, ...]:
    return tuple(conflict.cited for conflict in conflicts)


def _counted(result: SaveResult) -> SaveResult:
    """`result`, counted as a fence refusal by its predicate when it names one."""
    if result.predicate is not None:
        metrics.count(Metric.FENCE_REFUSAL, operation=Operation.ENTRY_WRITE, predicate=result.predicate)
    return result
