"""An agent's verification of an entry (`verify_memory`, decisions/0079): the turn's authority re-stated in the
mark's own transaction, like any agent write, and evidence the service re-checks itself, so a verification is
never an agent's word alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workspace_memory.document.policy import Mode
from workspace_memory.entries.agent_results import SaveResult, caller_of
from workspace_memory.entries.model import Author, Source
from workspace_memory.entries.refusals import Fenced
from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.kernel.terms import MAX_EVIDENCE, Outcome, Predicate
from workspace_memory.store.changes import AdmissionLive, Label
from workspace_memory.turns.authority import authority_checks, failed_predicate

if TYPE_CHECKING:
    from workspace_memory.entries.service import EntryService
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.store.ports import Cipher
    from workspace_memory.turns.authority import Authority


def verify_headers(admission_id: str | None, credential: str | None, evidence: Sequence[Source]) -> tuple[str, str]:
    """The headers of an agent's verification, and at least one and at most `MAX_EVIDENCE` pieces of evidence."""
    if not admission_id or not credential:
        raise InvalidInput("a verification needs the X-Admission-Id and X-Delivery-Credential headers")
    if not 1 <= len(evidence) <= MAX_EVIDENCE:
        raise InvalidInput(f"evidence must name between 1 and {MAX_EVIDENCE} cited sources")
    return admission_id, credential


def verify_attempt(
    entries: EntryService,
    cipher: Cipher,
    clock: Clock,
    authority: Authority,
    entry_id: str,
    revision: int,
    evidence: Sequence[Source],
) -> SaveResult | None:
    """One judgement and commit of the verification: `auto` marks the head, `read_only` refuses (a verification
    is not something a person could review as a proposal: it is a claim about now), `off` does nothing; None when
    only the retention moved under it (judge again)."""
    adm = authority.admission
    now = clock.now()
    retired = authority.retired(now, consumed_ok=True)
    if retired is not None:
        return SaveResult(Outcome.REFUSED, predicate=retired)
    if adm.mode is Mode.OFF:
        return SaveResult(Outcome.NOOP)
    if adm.mode is Mode.READ_ONLY:
        return SaveResult(Outcome.REFUSED, predicate=Predicate.POLICY)
    fence = [
        AdmissionLive(adm.id, adm.workspace_id, adm.user_id, Mode.AUTO.value, int(now)),
        *authority_checks(authority, now, Mode.AUTO),
    ]
    author = Author(adm.user_id, "agent", adm.id, rated=True)
    binding = authority.binding(cipher)  # a bound key session verifies inside its context only
    try:
        entries.verify_by_agent(caller_of(authority), entry_id, revision, evidence, author, fence, binding)
    except Fenced as exc:
        if exc.failed == {Label.CONSENT}:
            return None  # the retention or consent moved: judged again on a fresh snapshot, which says which
        return SaveResult(Outcome.REFUSED, predicate=failed_predicate(exc.failed))
    return SaveResult(Outcome.COMMITTED, entry_id, revision)
