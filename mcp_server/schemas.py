"""The tools' typed inputs: bounds the service enforces, advertised in the JSON schemas the SDK derives.

JSON Schema's `maxLength` counts characters and the service counts UTF-8 bytes: a string of N bytes has at most
N characters, so `maxLength: N` is a true upper bound a client can check, and `utf8_at_most` enforces the bytes
(an over-long string is refused as `INVALID_ARGUMENTS` naming the field, before anything is admitted).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from workspace_memory.document.edits import MAX_EDITS, MAX_LINE_BYTES, utf8_len
from workspace_memory.entries.validation import MAX_BODY_BYTES, MAX_SUMMARY_BYTES, MAX_TITLE_BYTES
from workspace_memory.kernel.terms import MAX_EVIDENCE, CitationKind, EntryScope, EntryType


def utf8_at_most(limit: int) -> AfterValidator:
    """Refuses a string over `limit` UTF-8 bytes with the stable error type `too_many_bytes`."""

    def check(value: str) -> str:
        if utf8_len(value) > limit:
            raise PydanticCustomError("too_many_bytes", "at most {limit} UTF-8 bytes", {"limit": limit})
        return value

    return AfterValidator(check)


def text(limit: int, description: str, min_length: int = 0) -> object:
    """A string field of at most `limit` UTF-8 bytes, its description saying so."""
    return Field(min_length=min_length, max_length=limit, description=f"{description}; at most {limit} UTF-8 bytes")


Line = Annotated[str, text(MAX_LINE_BYTES, "one line of the document, no line break", 1), utf8_at_most(MAX_LINE_BYTES)]


class _Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddEdit(_Edit):
    """Add one line, optionally at the end of a heading's section; already present: nothing to do."""

    op: Literal["add"] = Field(description="add a line")
    line: Line
    heading: Annotated[
        str | None,
        text(MAX_LINE_BYTES, "the section's heading line, e.g. '## Deploys' (created at the end if missing)"),
        utf8_at_most(MAX_LINE_BYTES),
    ] = None


class ReplaceEdit(_Edit):
    """Replace the one line that is exactly `old` with `new`."""

    op: Literal["replace"] = Field(description="replace a line")
    old: Annotated[Line, Field(description="the line as it is now (exactly one line must match)")]
    new: Annotated[Line, Field(description="the line it becomes")]


class RemoveEdit(_Edit):
    """Remove the one line that is exactly `line`."""

    op: Literal["remove"] = Field(description="remove a line")
    line: Annotated[Line, Field(description="the line to remove (exactly one line must match)")]


Edit = Annotated[AddEdit | ReplaceEdit | RemoveEdit, Field(discriminator="op")]
Edits = Annotated[
    list[Edit], Field(min_length=1, max_length=MAX_EDITS, description=f"at most {MAX_EDITS} one-line edits")
]


class EntryInput(BaseModel):
    """An entry to save: in `auto` it is stored through the fence, in `read_only` it becomes a candidate."""

    model_config = ConfigDict(extra="forbid")

    type: EntryType = Field(
        description="fact, preference or reference (a rule needs a quote of a turn's message: ask_agent)"
    )
    title: Annotated[str, text(MAX_TITLE_BYTES, "a short title", 1), utf8_at_most(MAX_TITLE_BYTES)]
    summary: Annotated[str, text(MAX_SUMMARY_BYTES, "one line that says it", 1), utf8_at_most(MAX_SUMMARY_BYTES)]
    body: Annotated[str, text(MAX_BODY_BYTES, "the details"), utf8_at_most(MAX_BODY_BYTES)] = ""
    scope: EntryScope = Field(
        default=EntryScope.WORKSPACE, description="workspace (every member reads it), member (the user's own) or agent"
    )
    key: str | None = Field(
        default=None,
        max_length=193,
        description="namespace/name (lower case): a key in use gets a new revision instead of a new entry",
    )


EntryId = Annotated[str, Field(min_length=1, max_length=128, description="the entry's id (en_…)")]


class EvidenceInput(BaseModel):
    """A cited source the agent read: the service re-checks that it still reads as `sha256` says."""

    model_config = ConfigDict(extra="forbid")

    kind: CitationKind = Field(description="entry (its body) or document-version (the document's text at it)")
    ref: str = Field(min_length=1, max_length=400, description="the entry's id, or the document version's number")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 (hex) of the UTF-8 text the agent read")


Evidence = Annotated[
    list[EvidenceInput], Field(min_length=1, max_length=MAX_EVIDENCE, description=f"1 to {MAX_EVIDENCE} cited sources")
]
