"""The attributes of the pages' items and their classes (decisions/0055, 0085), declared in `attributes.KINDS`.
A page's title, notes and summary are sealed; its category is a slug of a declared format (a label the owner
chose, never prose), its summary's sources ids and revisions only."""

from __future__ import annotations

import re
from collections.abc import Mapping

from workspace_memory.kernel import terms
from workspace_memory.store.attribute_forms import (
    ENTRY,
    INT,
    ISSUED,
    KEY,
    SEALED,
    TIMESTAMP,
    USER_ID,
    Form,
    ItemKind,
    enum_of,
    id_of,
    list_of,
    map_of,
)

CATEGORY = re.compile(r"[a-z][a-z0-9-]{0,31}")
"""A page category: a built-in one or a slug the workspace's owner added."""


def _owner(value: object, item: Mapping[str, object]) -> bool:
    """`-` for a workspace page (and its filings), the owning member's user id for a private one."""
    if item.get("scope") == terms.PageScope.PRIVATE.value:
        return isinstance(value, str) and USER_ID.fullmatch(value) is not None
    return value == "-"


PAGE_OWNER = Form("page-owner", _owner)
_SCOPE = enum_of(terms.PageScope)
_FILING = {**KEY, "pageId": ISSUED, "entryId": ENTRY, "scope": _SCOPE, "scopeOwner": PAGE_OWNER, "filedAt": TIMESTAMP}

PAGE_KINDS: tuple[ItemKind, ...] = (
    ItemKind(
        "page",
        "WS#",
        "PAGE#",
        {
            **KEY,
            "pageId": ISSUED,
            "revision": INT,
            "scope": _SCOPE,
            "scopeOwner": PAGE_OWNER,
            "category": id_of("category", CATEGORY),
            "titleCiphertext": SEALED,
            "notesCiphertext": SEALED,
            "summaryCiphertext": SEALED,
            "summarizedFrom": list_of(map_of({"entryId": ENTRY, "revision": INT})),
            "createdAt": TIMESTAMP,
            "updatedAt": TIMESTAMP,
        },
    ),
    ItemKind("page-entry", "WS#", "PAGEENTRY#", _FILING),
    ItemKind("entry-filing", "WS#", "FILED#", _FILING),
    ItemKind(
        "page-categories",
        "WS#",
        "PAGECATEGORIES",
        {**KEY, "revision": INT, "categories": list_of(id_of("category", CATEGORY)), "updatedAt": TIMESTAMP},
    ),
)
