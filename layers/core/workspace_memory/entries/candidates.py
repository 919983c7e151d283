"""Candidates (docs/architecture.md#candidates): an agent's entry write in `read_only`, or any agent's
`forget_memory`, held for a human to decide. A candidate is sealed, redacted and rate limited like the write it
proposes; accepting one goes through the very writes (or the very forget) a person's request would, with the
decision in the same transaction; a decided candidate keeps no text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workspace_memory.document.service import DAY_SECONDS, is_expired
from workspace_memory.entries.forget import EntryForgetting
from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import Author, CandidateView, Draft, EntryText, Written, candidate_context
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import candidate_visible, owner_of, write_right
from workspace_memory.entries.validation import redacted, validate
from workspace_memory.entries.writes import EntryWrites
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import CandidateNotFound, StaleRevision
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import CandidateKind, CandidateStatus, EntryScope, EntryType
from workspace_memory.store import keys
from workspace_memory.store.changes import Change, Create, Label, MemberExists, ReplaceRevision
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller

CANDIDATE_TTL_SECONDS = 30 * DAY_SECONDS


class Candidates:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        limits: Limits,
        reads: EntryReads,
        writes: EntryWrites,
        forgetting: EntryForgetting,
    ) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._limits = limits
        self._reads = reads
        self._writes = writes
        self._forgetting = forgetting

    # -- proposals -------------------------------------------------------------------------------------

    def propose(
        self,
        user_id: str,
        workspace_id: str,
        draft: Draft,
        *,
        admission_id: str | None = None,
        entry_id: str | None = None,
        base_revision: int | None = None,
        fence: Sequence[Change] | None = None,
    ) -> str:
        """An agent's entry write in `read_only`: a candidate, redacted, rate limited, for a human to decide.
        With `fence` (the turn's authority re-stated, without the write right) in the same transaction; a failed
        fence raises `Fenced`."""
        validate(draft)
        draft, _ = redacted(draft)
        caller, _ = load_caller(self._table, workspace_id, user_id)
        now = self._clock.now()
        candidate_id = new_id("ec")
        scope, owner = draft.scope.value, owner_of(caller, draft)
        payload = {
            "type": draft.type.value,
            "scope": scope,
            "agent": draft.agent,
            "reason": draft.reason,
            "text": json.loads(draft.text.plaintext()),
        }
        sealed = seal(
            self._cipher, json.dumps(payload, ensure_ascii=False), candidate_context(workspace_id, candidate_id)
        )
        item: Item = {
            **keys.as_key(keys.entry_candidate(workspace_id, candidate_id)),
            "candidateId": candidate_id,
            "revision": 1,
            "status": CandidateStatus.PENDING.value,
            "scope": scope,
            "scopeOwner": owner,
            "type": draft.type.value,
            "ciphertext": sealed.ciphertext,
            "proposedBy": user_id,
            "createdAt": iso(now),
            "ttl": int(now) + CANDIDATE_TTL_SECONDS,
        }
        if admission_id is not None:
            item["admissionId"] = admission_id
        if entry_id is not None:
            item["entryId"] = entry_id
            item["baseRevision"] = base_revision or 0
        author = Author(user_id, "agent", admission_id, rated=True)
        changes: list[Change] = [
            Create(item, Label.CANDIDATE),
            MemberExists(workspace_id, user_id),
            *self._limits.rated(workspace_id, author, now),
            *(fence or ()),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, now, None, fenced=fence is not None) from None
        return candidate_id

    def propose_forget(
        self, caller: Caller, entry_id: str, admission_id: str, fence: Sequence[Change], *, member_check: bool
    ) -> str:
        """An agent's `forget_memory`: a candidate of kind `forget` naming the chain and the revision the agent
        saw (its head now), holding no text, rate limited like any agent write, with `fence` (the turn's authority
        re-stated) in the same transaction; a failed fence raises `Fenced`. An entry the agent's user may not see
        is not found, as a missing one; `member_check` adds the user's membership when the fence does not state
        the write right (a transaction touches the member item once)."""
        workspace_id, user_id = caller.workspace.id, caller.user_id
        head = self._reads.live_head(caller, self._table.get(*keys.entry(workspace_id, entry_id)))
        now = self._clock.now()
        candidate_id = new_id("ec")
        item: Item = {
            **keys.as_key(keys.entry_candidate(workspace_id, candidate_id)),
            "candidateId": candidate_id,
            "kind": CandidateKind.FORGET.value,
            "revision": 1,
            "status": CandidateStatus.PENDING.value,
            "scope": head["scope"],
            "scopeOwner": head["scopeOwner"],
            "type": head["type"],
            "entryId": entry_id,
            "baseRevision": int(head["revision"]),
            "proposedBy": user_id,
            "admissionId": admission_id,
            "createdAt": iso(now),
            "ttl": int(now) + CANDIDATE_TTL_SECONDS,
        }
        changes: list[Change] = [
            Create(item, Label.CANDIDATE),
            *([MemberExists(workspace_id, user_id)] if member_check else []),
            *self._limits.rated(workspace_id, Author(user_id, "agent", admission_id, rated=True), now),
            *fence,
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, now, None, fenced=True) from None
        return candidate_id

    # -- the pending list ------------------------------------------------------------------------------

    def pending(
        self, user_id: str, workspace_id: str, limit: int, cursor: str | None
    ) -> tuple[list[CandidateView], str | None]:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        start_after = None if cursor is None else decode_cursor(cursor, keys.CANDIDATE_PREFIX)
        now = self._clock.now()
        views: list[CandidateView] = []
        last: str | None = None
        while len(views) < limit:
            page = self._table.query(
                keys.ws(workspace_id), keys.CANDIDATE_PREFIX, limit=100, newest_first=False, start_after=start_after
            )
            if not page:
                return views, None
            for item in page:
                start_after = item["sk"]
                if item["status"] != CandidateStatus.PENDING.value or is_expired(item, now):
                    continue
                if not candidate_visible(caller, item):
                    continue
                views.append(self._view(workspace_id, item))
                last = item["sk"]
                if len(views) == limit:
                    break
        more = self._table.query(
            keys.ws(workspace_id), keys.CANDIDATE_PREFIX, limit=1, newest_first=False, start_after=last
        )
        return views, encode_cursor(last) if more and last is not None else None

    def _open(self, workspace_id: str, item: Item) -> tuple[Draft, dict[str, Any]]:
        raw = json.loads(unseal(self._cipher, item["ciphertext"], candidate_context(workspace_id, item["candidateId"])))
        text = EntryText.parse(json.dumps(raw["text"]))
        draft = Draft(EntryType(raw["type"]), text, EntryScope(raw["scope"]), raw.get("agent"), raw.get("reason"))
        return draft, raw

    def _view(self, workspace_id: str, item: Item) -> CandidateView:
        kind = CandidateKind(item.get("kind", CandidateKind.SAVE.value))
        if kind is CandidateKind.FORGET:
            seen = self._seen_text(workspace_id, item["entryId"], int(item["baseRevision"]))
            scope, type_ = EntryScope(item["scope"]), EntryType(item["type"])
            title, summary = (None, None) if seen is None else (seen.title, seen.summary)
        else:
            draft, _ = self._open(workspace_id, item)
            scope, type_, title, summary = draft.scope, draft.type, draft.text.title, draft.text.summary
        return CandidateView(
            candidate_id=item["candidateId"],
            revision=int(item["revision"]),
            status=CandidateStatus(item["status"]),
            scope=scope,
            type=type_,
            title=title,
            summary=summary,
            entry_id=item.get("entryId"),
            base_revision=item.get("baseRevision"),
            proposed_by=item["proposedBy"],
            created_at=item["createdAt"],
            kind=kind,
        )

    def _seen_text(self, workspace_id: str, entry_id: str, revision: int) -> EntryText | None:
        """The text of the revision a forget proposal names, for the person deciding it (the candidate holds
        none): None once that revision is gone (forgotten, or expired after its supersession)."""
        item = self._table.get(*keys.entry_revision(workspace_id, entry_id, revision))
        if item is None or is_expired(item, self._clock.now()):
            return None
        return self._reads.open(workspace_id, item)

    # -- decisions -------------------------------------------------------------------------------------

    def _undecided(self, caller: Caller, revision: int, found: Item | None) -> Item:
        if found is None or is_expired(found, self._clock.now()) or not candidate_visible(caller, found):
            raise CandidateNotFound("candidate not found")
        if found["status"] != CandidateStatus.PENDING.value or int(found["revision"]) != revision:
            raise StaleRevision("the candidate was decided or changed", current_revision=int(found["revision"]))
        return found

    def _decided(self, item: Item, status: CandidateStatus, by: str) -> ReplaceRevision:
        """The candidate's decision: its text dropped (a decided candidate keeps none), compare-and-set."""
        decided = {k: v for k, v in item.items() if k != "ciphertext"}
        decided.update(
            status=status.value, revision=int(item["revision"]) + 1, decidedBy=by, decidedAt=iso(self._clock.now())
        )
        return ReplaceRevision(decided, int(item["revision"]), Label.CANDIDATE)

    def accept(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> Written:
        """The candidate becomes an entry (or the next revision of its chain) through the same writes."""
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        item = self._undecided(caller, revision, found)
        decision = [self._decided(item, CandidateStatus.ACCEPTED, user_id)]
        if item.get("kind") == CandidateKind.FORGET.value:
            return self._accept_forget(caller, item, decision)
        draft, _ = self._open(workspace_id, item)
        author = Author(item["proposedBy"], "agent", item.get("admissionId"))
        target = item.get("entryId")
        if target is None:
            return self._writes.new_chain(caller, draft, author, (), decision)
        head = self._reads.live_head(caller, self._table.get(*keys.entry(workspace_id, target)))
        return self._writes.next_revision(caller, head, int(item["baseRevision"]), draft, author, decision)

    def _accept_forget(self, caller: Caller, item: Item, decision: Sequence[Change]) -> Written:
        """Forget the chain exactly as `DELETE …/entries/{id}` does, iff its head is still the revision the
        proposal saw (compare-and-set, also inside the first transaction): one that moved on or was forgotten
        meanwhile answers `STALE_REVISION` / `ENTRY_FORGOTTEN` and changes nothing, the candidate included."""
        workspace_id, entry_id, seen = caller.workspace.id, item["entryId"], int(item["baseRevision"])
        head = self._reads.live_head(caller, self._table.get(*keys.entry(workspace_id, entry_id)))
        if int(head["revision"]) != seen:
            raise StaleRevision(
                f"the entry moved on from revision {seen}, which the proposal named",
                current_revision=int(head["revision"]),
            )
        right = write_right(caller, head["scope"], head["scopeOwner"])
        self._forgetting.forget_chain(caller, head, right, decision=decision)
        return Written(entry_id, seen, forgotten=True)

    def reject(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> None:
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        item = self._undecided(caller, revision, found)
        right = write_right(caller, item["scope"], item["scopeOwner"])
        try:
            self._table.transact([self._decided(item, CandidateStatus.REJECTED, user_id), right])
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, self._clock.now(), None) from None
