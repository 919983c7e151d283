"""The agent's reads of memory entries: `read_memory`, `search_memory` and the list an agent runtime pages through
(the MCP server's `list_entries` and its memory tool's key lookups). Each is judged on the turn's authority, read in
one snapshot: the `memory:read` scope, access and the credential slot still held, memory not `off`; and each stays
inside a bound key session's context (decisions/0077): what is outside is not found, not listed, not ranked.
"""

from __future__ import annotations

from collections.abc import Sequence

from workspace_memory.document.policy import Mode
from workspace_memory.entries.agent_results import caller_of
from workspace_memory.entries.model import EntryView, Filters, Page
from workspace_memory.entries.service import EntryService
from workspace_memory.entries.validation import validate_key
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.errors import InvalidInput, MemoryOff, Unavailable
from workspace_memory.search.entry_search import (
    Found,
    SearchFilters,
    SearchService,
    entries_revision,
    validate_query,
)
from workspace_memory.store import keys
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.turns.authority import Authority, read_authority
from workspace_memory.turns.notes import AdmissionRetired
from workspace_memory.workspaces.keysessions import Scope


class AgentEntryReads:
    """The reads; `AgentEntryService` (agent_entries.py) adds the writes."""

    def __init__(
        self, table: Table, cipher: Cipher, clock: Clock, entries: EntryService, search: SearchService | None = None
    ) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._entries = entries
        self._search = search

    # -- read_memory -----------------------------------------------------------------------------------

    def read(self, workspace_id: str, admission_id: str | None, credential: str | None, entry_id: str) -> EntryView:
        """One entry the admission's user may see, while the admission still has access (`memory:read`)."""
        authority = self._reader(workspace_id, admission_id, credential)
        within = authority.binding(self._cipher)
        return self._entries.read(authority.admission.user_id, workspace_id, entry_id, within=within)

    def list_entries(
        self,
        workspace_id: str,
        admission_id: str | None,
        credential: str | None,
        key: str | None,
        limit: int,
        cursor: str | None,
    ) -> Page:
        """The admission's user's active entries, a page at a time, under the checks of `read_memory`: inside a
        bound key session's context only, so a key outside it is no entry (`key`: one chain, as the memory
        tool's paths name it)."""
        if key is not None:
            validate_key(key)
        authority = self._reader(workspace_id, admission_id, credential)
        within = authority.binding(self._cipher)
        user_id = authority.admission.user_id
        return self._entries.list_entries(user_id, workspace_id, Filters(key=key), limit, cursor, within)

    # -- search_memory ---------------------------------------------------------------------------------

    def search(self, workspace_id: str, admission_id: str | None, credential: str | None, query: str, k: int) -> Found:
        """The admission's user's best `k` entries for `query`, under the very checks of `read_memory`; the
        entries counter is read in the authority's own snapshot, so a warm index costs no second read."""
        validate_query(query, k)
        if self._search is None:
            raise Unavailable("search is not configured in this process")
        authority = self._reader(workspace_id, admission_id, credential, [keys.entry_counter(workspace_id)])
        (counter,) = authority.extra
        within = SearchFilters(within=authority.binding(self._cipher))
        return self._search.ranked(caller_of(authority), entries_revision(counter), query, k, within)

    def _reader(
        self,
        workspace_id: str,
        admission_id: str | None,
        credential: str | None,
        extra: Sequence[keys.Key] = (),
    ) -> Authority:
        """The authority of an agent's read (`read_memory`, `search_memory`, the list): the admission's headers, the
        `memory:read` scope, access and the credential slot still held (else `ADMISSION_RETIRED`), memory not
        `off` (else `MEMORY_OFF`)."""
        if not admission_id or not credential:
            raise InvalidInput("entry reads need the X-Admission-Id and X-Delivery-Credential headers")
        authority = read_authority(self._table, admission_id, workspace_id, credential, extra)
        authority.require_scope(Scope.MEMORY_READ)
        now = self._clock.now()
        if not authority.has_access(now) or not authority.slot_holds(now):
            raise AdmissionRetired("this admission no longer has access to the workspace")
        if authority.policy.mode is Mode.OFF:
            raise MemoryOff("workspace memory is off")
        return authority
