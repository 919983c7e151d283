"""The workspace memory policy: what the assistant may do with the document.

`off`: nothing is recalled or captured. `read_only`: recalled; captures become proposals. `auto`: captures
commit through the fence. A missing row reads as `read_only`, revision 0, clear generation 0. Every change
bumps the revision (even `auto` -> `auto`), so a turn admitted under the old revision is retired.
"""

from __future__ import annotations

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Forbidden, StalePolicyRevision
from workspace_memory.kernel.terms import Mode as Mode
from workspace_memory.store import keys
from workspace_memory.store.changes import Label, SetPolicyMode
from workspace_memory.store.document_records import Policy as Policy
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import load_caller


class PolicyService:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def get(self, user_id: str, workspace_id: str) -> Policy:
        _, (item,) = load_caller(self._table, workspace_id, user_id, [keys.policy(workspace_id)])
        return Policy.from_item(item)

    def set(self, user_id: str, workspace_id: str, mode: Mode, expected_revision: int) -> Policy:
        """Compare-and-set on the revision; only the owner governs what the assistant may do."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.policy(workspace_id)])
        caller.require_owner()
        current = Policy.from_item(item)
        if current.revision != expected_revision:
            raise StalePolicyRevision("policy revision is stale", current=current)
        updated = Policy(mode, expected_revision + 1, current.clear_generation)
        try:
            # A Clear may bump the generation concurrently: the mode change never overwrites it.
            self._table.transact(
                [
                    SetPolicyMode(workspace_id, mode.value, expected_revision, iso(self._clock.now()), user_id),
                    caller.still_writer(),
                ]
            )
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            # The policy the compare-and-set was judged against (absent: the default), not a read after it.
            latest = Policy.from_item(exc.seen(keys.policy(workspace_id)))
            raise StalePolicyRevision("policy revision is stale", current=latest) from None
        return updated
