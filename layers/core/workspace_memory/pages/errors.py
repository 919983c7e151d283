"""The pages' refusals (decisions/0085), in the one registry of codes (`api.errors.registered_codes` finds them)."""

from __future__ import annotations

from workspace_memory.kernel.errors import Conflict, InvalidInput, NotFound


class PageNotFound(NotFound):
    """Also for another member's private page: a missing one and a hidden one answer the same bytes."""

    code = "PAGE_NOT_FOUND"


class EntryNotFiled(NotFound):
    """Unfiling an entry the page does not hold."""

    code = "ENTRY_NOT_FILED"


class EntryAlreadyFiled(Conflict):
    """An entry is filed in at most one page at a time: unfile it from the other page first."""

    code = "ENTRY_ALREADY_FILED"


class PageFull(Conflict):
    """A page holds at most `MAX_PAGE_ENTRIES` entries (its deletion takes its filings in one transaction)."""

    code = "PAGE_FULL"


class FilingScopeMismatch(InvalidInput):
    """A private entry may only be filed in a private page of its own member."""

    code = "FILING_SCOPE_MISMATCH"


class InvalidPageCategory(InvalidInput):
    """A category that is not built in nor one the owner added, or an owner's list that breaks the rules."""

    code = "INVALID_PAGE_CATEGORY"
