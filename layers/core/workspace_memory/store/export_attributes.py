"""The attributes of an export's items and their classes (decisions/0055, 0068), declared in `attributes.KINDS`."""

from __future__ import annotations

from workspace_memory.kernel import terms
from workspace_memory.store.attribute_forms import INT, ISSUED, SEALED, TIMESTAMP, USER, Form, enum_of

EXPORT_FIELDS: dict[str, Form] = {
    "exportId": ISSUED,
    "scope": enum_of(terms.ExportScope),
    "requestedBy": USER,
    "status": enum_of(terms.ExportStatus),
    "createdAt": TIMESTAMP,
    "downloadedAt": TIMESTAMP,
    "ttl": INT,
}
EXPORT_PART_FIELDS: dict[str, Form] = {
    "exportId": ISSUED,
    "chunks": INT,
    "part": SEALED,  # one slice of a file's single sealed message
    "ttl": INT,
}
