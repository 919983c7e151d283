"""The memory tool's commands (Anthropic's client-side `memory` tool, `memory_20250818`) and its `/memories`
paths, mapped onto this service (docs/mcp.md#the-memory-tool):

- `/memories` — a directory: `workspace.md` and `entries/`;
- `/memories/workspace.md` — the workspace document;
- `/memories/entries` — a directory of the entries the user may see;
- `/memories/entries/<entryId>.md` — one entry by its id (`en_…`);
- `/memories/entries/<namespace>/<name>.md` — the entry whose key is `namespace/name` (a create makes it).

Anything else under `/memories` is `PATH_NOT_MAPPED`; a path outside it, or with an empty, `.` or `..` segment, a
backslash or a control character, is `PATH_NOT_ALLOWED`: paths are parsed here, never joined onto anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from workspace_memory.kernel import errors

from .delegation import ApiError

ROOT = "/memories"
DOCUMENT = "workspace.md"
ENTRIES = "entries"
MAX_PATH = 300
MAX_FILE_TEXT = 16 * 1024

_ENTRY_ID = re.compile(r"en_[0-9a-f]{1,64}")
_KEY_PART = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
_FORBIDDEN = re.compile(r"[\\\x00-\x1f\x7f]")


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid")


Path_ = Annotated[str, Field(min_length=1, max_length=MAX_PATH, description="a path under /memories")]
Text = Annotated[str, Field(max_length=MAX_FILE_TEXT)]


class View(_Command):
    """A directory's listing, or a file's lines numbered from 1 (optionally lines start..end, end -1: to the end)."""

    command: Annotated[Literal["view"], Field(description="view")]
    path: Path_
    view_range: Annotated[list[int], Field(min_length=2, max_length=2)] | None = Field(
        default=None, description="[start, end] line numbers, 1-based; end -1 runs to the end"
    )


class Create(_Command):
    """Write a whole entry file (`/memories/entries/<namespace>/<name>.md`): its first line is the summary."""

    command: Annotated[Literal["create"], Field(description="create")]
    path: Path_
    file_text: Annotated[Text, Field(description="the file's text")]


class StrReplace(_Command):
    """Replace the one occurrence of `old_str` in the file with `new_str`."""

    command: Annotated[Literal["str_replace"], Field(description="str_replace")]
    path: Path_
    old_str: Annotated[Text, Field(min_length=1, description="text that occurs exactly once in the file")]
    new_str: Annotated[Text, Field(description="what it becomes")]


class Insert(_Command):
    """Insert `insert_text` after line `insert_line` (0: before the first line)."""

    command: Annotated[Literal["insert"], Field(description="insert")]
    path: Path_
    insert_line: Annotated[int, Field(ge=0, description="the line to insert after; 0 inserts at the top")]
    insert_text: Annotated[Text, Field(min_length=1, description="the lines to insert")]


class Delete(_Command):
    """Delete a file: for an entry, a proposal to forget it that a member decides."""

    command: Annotated[Literal["delete"], Field(description="delete")]
    path: Path_


class Rename(_Command):
    """Move an entry to another key: saves it under `new_path`, proposes forgetting `old_path`."""

    command: Annotated[Literal["rename"], Field(description="rename")]
    old_path: Path_
    new_path: Path_


MemoryCommand = Annotated[View | Create | StrReplace | Insert | Delete | Rename, Field(discriminator="command")]


@dataclass(frozen=True)
class Root:
    """`/memories` itself."""


@dataclass(frozen=True)
class Document:
    """`/memories/workspace.md`."""


@dataclass(frozen=True)
class EntriesDir:
    """`/memories/entries`."""


@dataclass(frozen=True)
class EntryFile:
    """One entry, by id or by key (exactly one of them)."""

    entry_id: str | None = None
    key: str | None = None


Target = Root | Document | EntriesDir | EntryFile


def parse(path: str) -> Target:
    """What `path` names; refuses, with a stable code, what it may not name."""
    if _FORBIDDEN.search(path) or not (path == ROOT or path.startswith(ROOT + "/")):
        raise ApiError.of(errors.PathNotAllowed, f"paths are under {ROOT}, with no '..', '.' or empty segment")
    parts = path[len(ROOT) :].strip("/").split("/") if path.strip("/") != ROOT.strip("/") else []
    if any(part in ("", ".", "..") for part in parts) or "//" in path:
        raise ApiError.of(errors.PathNotAllowed, f"paths are under {ROOT}, with no '..', '.' or empty segment")
    match parts:
        case []:
            return Root()
        case [name] if name == DOCUMENT:
            return Document()
        case [name] if name == ENTRIES:
            return EntriesDir()
        case [name, file] if name == ENTRIES and _ENTRY_ID.fullmatch(file.removesuffix(".md")) and file.endswith(".md"):
            return EntryFile(entry_id=file.removesuffix(".md"))
        case [name, namespace, file] if (
            name == ENTRIES
            and file.endswith(".md")
            and _KEY_PART.fullmatch(namespace)
            and _KEY_PART.fullmatch(file.removesuffix(".md"))
        ):
            return EntryFile(key=f"{namespace}/{file.removesuffix('.md')}")
    raise ApiError.of(
        errors.PathNotMapped,
        f"{ROOT} holds {DOCUMENT} (the document) and {ENTRIES}/<entryId>.md or {ENTRIES}/<namespace>/<name>.md "
        "(entries; names lower case)",
    )


def entry_path(entry_id: str, key: str | None) -> str:
    """The path an entry is shown at: its key's when it has one."""
    if key is not None:
        return f"{ROOT}/{ENTRIES}/{key}.md"
    return f"{ROOT}/{ENTRIES}/{entry_id}.md"
