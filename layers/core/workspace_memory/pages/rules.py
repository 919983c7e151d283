"""Who reads and writes a page, what its text may be, and how its sealed parts are opened (decisions/0085).

A workspace page is every member's to read and a writer's to change; a private page is its member's alone,
whatever their role (the notions of `entries/scopes.py`: a scope and its owner, `-` for the workspace). A page
the caller may not read is not found, the same answer as a page that does not exist."""

from __future__ import annotations

from collections.abc import Sequence

from workspace_memory.entries.scopes import WORKSPACE_OWNER
from workspace_memory.kernel.errors import InvalidInput, WorkspaceNotFound
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import PageScope
from workspace_memory.pages.errors import InvalidPageCategory, PageNotFound
from workspace_memory.pages.model import BUILT_IN_CATEGORIES, CATEGORY, MAX_EXTRA_CATEGORIES, page_context
from workspace_memory.store.changes import Change, Label, MemberExists
from workspace_memory.store.page_records import PageRecord
from workspace_memory.store.ports import Cipher, TransactionCancelled
from workspace_memory.workspaces.access import Caller


def owner_of(caller: Caller, scope: PageScope) -> str:
    return caller.user_id if scope is PageScope.PRIVATE else WORKSPACE_OWNER


def readable(page: PageRecord | None, caller: Caller) -> PageRecord:
    """The page if the caller may read it; otherwise PAGE_NOT_FOUND (missing and hidden answer alike)."""
    if page is None or (page.scope is PageScope.PRIVATE and page.scope_owner != caller.user_id):
        raise PageNotFound("page not found")
    return page


def write_right(caller: Caller, scope: PageScope) -> Change:
    """The transaction's check of the right to change a page of `scope`: its member for a private page (any
    role), write right for a workspace page (403 `FORBIDDEN` without it)."""
    if scope is PageScope.PRIVATE:
        return MemberExists(caller.workspace.id, caller.user_id)
    caller.require_write()
    return caller.still_writer()


def refused_access(exc: TransactionCancelled) -> None:
    """A write whose access check failed: the caller left the workspace, or lost write right, meanwhile."""
    if Label.ACCESS in exc.failed():
        raise WorkspaceNotFound("workspace not found") from None


def categories_checked(raw: Sequence[str]) -> tuple[str, ...]:
    """The owner's extra categories: slugs, none built in, no repeats, at most `MAX_EXTRA_CATEGORIES`."""
    if len(raw) > MAX_EXTRA_CATEGORIES:
        raise InvalidPageCategory(f"at most {MAX_EXTRA_CATEGORIES} extra categories")
    for name in raw:
        if not CATEGORY.fullmatch(name) or name in BUILT_IN_CATEGORIES:
            raise InvalidPageCategory("a category is a new slug of a-z 0-9 - (1-32, a letter first)")
    if len(set(raw)) != len(raw):
        raise InvalidPageCategory("a category is listed twice")
    return tuple(raw)


def category_checked(category: str, allowed: Sequence[str]) -> str:
    if category not in allowed:
        raise InvalidPageCategory("not one of the workspace's page categories")
    return category


def text_checked(text: str, what: str, limit: int, *, empty: bool = False) -> str:
    if (not empty and not text.strip()) or len(text) > limit:
        raise InvalidInput(f"{what} must be {0 if empty else 1}-{limit} characters")
    return text


class PageText:
    """Seals and opens a page's parts under the workspace's branch key, each in its own context."""

    def __init__(self, cipher: Cipher) -> None:
        self._cipher = cipher

    def seal(self, workspace_id: str, page_id: str, part: str, text: str) -> bytes:
        return seal(self._cipher, text, page_context(workspace_id, page_id, part)).ciphertext

    def open(self, workspace_id: str, page_id: str, part: str, sealed: bytes) -> str:
        return unseal(self._cipher, sealed, page_context(workspace_id, page_id, part))

    def maybe(self, workspace_id: str, page_id: str, part: str, sealed: bytes | None) -> str | None:
        return None if sealed is None else self.open(workspace_id, page_id, part, sealed)
