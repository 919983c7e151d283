"""The steps of a member's erasure, served to the erasure workflow by the deletion function
(docs/architecture.md#erasing-a-member). Each step reads whom it erases from the erasure's record, judges a
batch of items by their layout (`store/erasure_records`), and writes the batch's deletions, rewrites and
counts in one transaction: a step retried after it landed finds nothing left to do and counts nothing twice."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from workspace_memory.entries.forget import EntryForgetting, private_to
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import ErasureNotFound, WorkspaceNotFound
from workspace_memory.kernel.terms import Role
from workspace_memory.search import search_snapshot
from workspace_memory.store import erasure_queries, keys
from workspace_memory.store.changes import (
    BumpEntriesRevision,
    Change,
    CompleteErasure,
    CountErased,
    Delete,
    Label,
    RewriteAttributes,
)
from workspace_memory.store.erasure_records import (
    COMPLETED,
    RUNNING,
    ErasureRecord,
    Rename,
    counted,
    deleted_by_erasure,
    is_erasure,
    key_of,
    keyed_by,
    kind_of,
    rewrite_of,
    sort_key,
)
from workspace_memory.store.ports import Item, Table, TransactionCancelled
from workspace_memory.store.workspace_records import Workspace
from workspace_memory.turns.admission import AdmissionRef, InvalidAdmission
from workspace_memory.workspaces.access import Caller
from workspace_memory.workspaces.erasure_contract import BATCH_SIZE, Phase, StepResult

ADMISSION_PREFIX = "adm_"
DONE = StepResult(more=False)


def renaming(subject: str, pseudonym: str) -> Rename:
    """The member's id becomes the pseudonym; so does the user an admission id encodes (its random part kept,
    so every item that names one admission still names the same one)."""

    def rename(value: str) -> str:
        if value == subject:
            return pseudonym
        if value.startswith(ADMISSION_PREFIX):
            try:
                ref = AdmissionRef.parse(value)
            except InvalidAdmission:
                return value
            if ref.user_id == subject:
                return replace(ref, user_id=pseudonym).encode(value.partition(".")[0])
        return value

    return rename


class MemberErasureSteps:
    def __init__(self, table: Table, clock: Clock, forgetting: EntryForgetting, batch: int = BATCH_SIZE) -> None:
        self._table = table
        self._clock = clock
        self._forgetting = forgetting
        self._batch = batch

    def step(self, workspace_id: str, erasure_id: str, phase: Phase, after: str | None) -> StepResult:
        record = ErasureRecord.of(self._table.get(*keys.erasure(workspace_id, erasure_id)))
        if record is None:
            raise ErasureNotFound("erasure not found")
        if record.status != RUNNING or record.subject is None:
            return DONE  # its receipt is written: a retried last step
        match phase:
            case Phase.PRIVATE:
                return self._private(workspace_id, record.subject, after)
            case Phase.HISTORIES:
                return self._histories(workspace_id, record, after)
            case Phase.CONVERSATIONS:
                return self._conversations(workspace_id, record, after)
            case Phase.ITEMS:
                return self._items(workspace_id, record, after)
            case Phase.SEARCH:
                self._table.transact([BumpEntriesRevision(workspace_id)])  # a snapshot being built cannot land
                search_snapshot.drop(self._table, workspace_id)
                return DONE
            case Phase.RECEIPT:
                return self._receipt(workspace_id, record)

    def _private(self, workspace_id: str, subject: str, after: str | None) -> StepResult:
        """The member's private entries, by the one forget path (revisions, key, counter, snapshot), acting
        as the owner; the tombstones it leaves go with the partition's items."""
        meta = Workspace.of(self._table.get(*keys.meta(workspace_id)))
        if meta is None or meta.deleted:
            raise WorkspaceNotFound("workspace not found")
        owner = Caller(meta.owner_id, Role.OWNER, meta)
        forgotten = self._forgetting.forget_where(owner, private_to(subject), after=after, budget=self._batch)
        return StepResult(more=forgotten.last is not None, after=forgotten.last)

    def _histories(self, workspace_id: str, record: ErasureRecord, after: str | None) -> StepResult:
        """A page of the items that name the workspace elsewhere: the turn ids of the member's admissions among
        them. Reads only, so a retried step finds the same turns; the workflow deletes their histories."""
        found = self._elsewhere(workspace_id, after)
        if not found:
            return DONE
        others = [key for key in found if not erasure_queries.is_conversation(key[0])]
        turns = erasure_queries.turns_of(self._table, others, str(record.subject))
        return StepResult(more=True, after=json.dumps(list(found[-1])), turns=turns)

    def _elsewhere(self, workspace_id: str, after: str | None) -> list[keys.Key]:
        """The next page of the items outside the partition that name the workspace, after the key `after`."""
        start = None if after is None else json.loads(after)
        return erasure_queries.named_elsewhere(
            self._table, workspace_id, None if start is None else (start[0], start[1]), self._batch
        )

    def _conversations(self, workspace_id: str, record: ErasureRecord, after: str | None) -> StepResult:
        """The member's conversations (every item but the owner record, which keeps the id claimed under their
        pseudonym) and their admissions, found through the items that name the workspace."""
        found = self._elsewhere(workspace_id, after)
        if not found:
            return DONE
        subject = str(record.subject)
        landed = True
        for pk in dict.fromkeys(pk for pk, _ in found if erasure_queries.is_conversation(pk)):
            theirs = erasure_queries.members_conversation(self._table, pk, subject)
            if theirs is not None:
                owner, items = theirs
                landed = self._apply(workspace_id, record, items, [owner]) and landed
        others = [key for key in found if not erasure_queries.is_conversation(key[0])]
        admissions = erasure_queries.admissions_of(self._table, others, subject)
        landed = self._apply(workspace_id, record, admissions, []) and landed
        if not landed:
            return StepResult(more=True, after=after)  # something changed since it was read: again
        return StepResult(more=True, after=json.dumps(list(found[-1])))

    def _items(self, workspace_id: str, record: ErasureRecord, after: str | None) -> StepResult:
        page = erasure_queries.partition_page(self._table, workspace_id, after, self._batch)
        if not page:
            return DONE
        subject = str(record.subject)
        judged = [item for item in page if not is_erasure(item)]
        gone = [deleted_by_erasure(item, subject) for item in judged]
        deletes = [item for item, go in zip(judged, gone, strict=True) if go]
        rest = [item for item, go in zip(judged, gone, strict=True) if not go]
        if not self._apply(workspace_id, record, deletes, rest):
            return StepResult(more=True, after=after)  # an item changed since it was read: read the page again
        # Where the next page starts: never a key that names the member (those are deleted anyway).
        kept = [sort_key(item) for item in page if not keyed_by(item, subject)]
        return StepResult(more=True, after=kept[-1] if kept else after)

    def _apply(self, workspace_id: str, record: ErasureRecord, deletes: Sequence[Item], rest: Sequence[Item]) -> bool:
        """Deletes `deletes`, pseudonymizes whatever in `rest` names the member, with the counts, a batch to a
        transaction. False when a rewrite's item changed since it was read (nothing of that batch landed)."""
        subject, rename = str(record.subject), renaming(str(record.subject), record.pseudonym)
        actions: list[tuple[Change, str, str]] = [(Delete(key_of(i)), "deleted", kind_of(i)) for i in deletes]
        for item in rest:
            rewrite = rewrite_of(item, subject, rename)
            if rewrite is not None:
                change = RewriteAttributes(key_of(item), rewrite.before, rewrite.after)
                actions.append((change, "pseudonymized", kind_of(item)))
        for start in range(0, len(actions), self._batch):
            batch = actions[start : start + self._batch]
            tally = {
                what: Counter(kind for _, done, kind in batch if done == what) for what in ("deleted", "pseudonymized")
            }
            count = CountErased(workspace_id, record.erasure_id, counted(tally["deleted"], tally["pseudonymized"]))
            try:
                self._table.transact([*(change for change, _, _ in batch), count])
            except TransactionCancelled as exc:
                return Label.ERASURE in exc.failed()  # True: the receipt is written, nothing more is done
        return True

    def _receipt(self, workspace_id: str, record: ErasureRecord) -> StepResult:
        done = replace(record, subject=None, status=COMPLETED, completed_at=iso(self._clock.now()))
        with contextlib.suppress(TransactionCancelled):  # written already by a step whose answer was lost
            self._table.transact([CompleteErasure(done.to_item(workspace_id))])
        return DONE
