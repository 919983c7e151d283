"""An export's archive as pure functions (docs/decisions/0068): the encryption context of its files, how a sealed
file is cut into chunks and put together again, what a file counts, its weight in a response, and the
manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from pydantic.alias_generators import to_camel

from workspace_memory.kernel.terms import ExportFile
from workspace_memory.store.export_records import ExportChunk, ExportRecord
from workspace_memory.workspaces.export_contract import CHUNK_BYTES, EXPORT_TTL_SECONDS

MANIFEST_FORMAT = 1


def export_context(workspace_id: str, export_id: str, file: ExportFile) -> dict[str, str]:
    """Binds a file's ciphertext to its workspace, export and name: a chunk copied elsewhere fails to decrypt."""
    return {"workspace": workspace_id, "kind": "export", "export": export_id, "file": file.value}


def slices(ciphertext: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    return [ciphertext[start : start + size] for start in range(0, len(ciphertext), size)] or [b""]


def assembled(chunks: Sequence[ExportChunk]) -> dict[ExportFile, bytes]:
    """Each file's ciphertext from its chunks: chunk 0 says how many belong to the write that stands."""
    by_file: dict[ExportFile, dict[int, ExportChunk]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk.file, {})[chunk.number] = chunk
    found: dict[ExportFile, bytes] = {}
    for file, numbered in by_file.items():
        first = numbered.get(0)
        if first is None or any(n not in numbered for n in range(first.chunks)):
            continue
        found[file] = b"".join(numbered[n].part for n in range(first.chunks))
    return found


def count_of(file: ExportFile, text: str) -> int:
    """How many records a file holds: rows of a list, 1 for one object, 1 for a non-empty Markdown document."""
    if file is ExportFile.DOCUMENT_MD:
        return 1 if text else 0
    value = json.loads(text)
    return len(value) if isinstance(value, list) else 1


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def wire_bytes(text: str) -> int:
    """A file's weight in the archive's response as Lambda carries it: a JSON string inside the JSON body, which
    is itself a string inside Lambda's response envelope (escaped twice, non-ASCII as escapes: an upper bound)."""
    return len(json.dumps(json.dumps(text)))


@dataclass(frozen=True)
class FileDigest:
    count: int
    sha256: str
    bytes: int


@dataclass(frozen=True)
class Manifest:
    format: int
    export_id: str
    workspace_id: str
    scope: str
    requested_by: str
    created_at: str
    expires_at: int
    files: dict[str, dict[str, object]]


def digest_of(file: ExportFile, text: str) -> dict[str, object]:
    """A file's entry in the manifest: its record count, its plaintext's SHA-256, its UTF-8 size."""
    return asdict(FileDigest(count_of(file, text), sha256_of(text), len(text.encode("utf-8"))))


def manifest_of(export: ExportRecord, files: Mapping[ExportFile, str]) -> dict[str, object]:
    """The manifest: who asked for what and when, and per file its record count, its plaintext's SHA-256 and its
    UTF-8 size. Ids, numbers and digests only; camelCase on the wire."""
    digests = {file.value: digest_of(file, text) for file, text in sorted(files.items())}
    manifest = Manifest(
        MANIFEST_FORMAT,
        export.export_id,
        export.workspace_id,
        export.scope.value,
        export.requested_by,
        export.created_at,
        export.ttl,
        digests,
    )
    return {to_camel(name): value for name, value in asdict(manifest).items()}


def expiry(now: float) -> int:
    return int(now) + EXPORT_TTL_SECONDS
