"""The attributes of the owner's consolidation items and their classes (decisions/0055, 0088), declared in
`attributes.KINDS`: flags, revisions, ids and times, nothing else."""

from __future__ import annotations

from workspace_memory.store.attribute_forms import BOOL, INT, ISSUED, KEY, TIMESTAMP, USER, ItemKind

CONSOLIDATION_KINDS: tuple[ItemKind, ...] = (
    ItemKind(
        "consolidation",
        "WS#",
        "CONSOLIDATION",
        {**KEY, "enabled": BOOL, "autoFile": BOOL, "revision": INT, "updatedAt": TIMESTAMP, "updatedBy": USER},
    ),
    ItemKind(
        "consolidation-run",
        "WS#",
        "CONSOLIDATIONRUN",
        {**KEY, "runId": ISSUED, "requestedBy": USER, "requestedAt": TIMESTAMP, "revision": INT},
    ),
)
