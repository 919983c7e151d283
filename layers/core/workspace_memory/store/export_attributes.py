"""The attributes of an export's and an import's items and their classes (decisions/0055, 0068, 0069), declared
in `attributes.KINDS`."""

from __future__ import annotations

import re

from workspace_memory.kernel import terms
from workspace_memory.store.attribute_forms import INT, ISSUED, KEY, SEALED, TIMESTAMP, USER, Form, ItemKind, enum_of
from workspace_memory.store.import_records import COUNTED

_STEP = re.compile(r"[a-z]{1,16}(?:#[0-9]{1,6})?")
STEPS = Form("steps", lambda value, _item: isinstance(value, set) and all(_STEP.fullmatch(str(s)) for s in value))
"""An import's applied steps: names the service makes (a file's stem and a batch number)."""

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
IMPORT_FIELDS: dict[str, Form] = {
    "importId": ISSUED,
    "sourceWorkspace": ISSUED,
    "sourceExport": ISSUED,
    "requestedBy": USER,
    "status": enum_of(terms.ImportStatus),
    "createdAt": TIMESTAMP,
    "completedAt": TIMESTAMP,
    "ttl": INT,
    "applied": STEPS,
    **{name: INT for name in COUNTED},
}

EXPORT_KINDS: tuple[ItemKind, ...] = (
    ItemKind("export", "WS#", "EXPORT#", {**KEY, **EXPORT_FIELDS}),
    ItemKind("export-part", "WS#", "EXPORTPART#", {**KEY, **EXPORT_PART_FIELDS}),
    ItemKind("import", "WS#", "IMPORT#", {**KEY, **IMPORT_FIELDS}),
)
