"""Pure line-edit engine behind the agent's memory write tool (docs/architecture.md#capture).

An agent changes memory only through a few single-line edits, so a human can see exactly what changed
and a stale edit can never silently rewrite text: `replace`/`remove` must name exactly one existing line,
and an `add` that is already present is a no-op. A call is all-or-nothing. No I/O happens here, and
error messages carry only edit indexes and stable codes, never memory or line text (they reach logs).
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field

from workspace_memory.kernel.errors import InvalidInput

MAX_EDITS = 5
MAX_LINE_BYTES = 500

ProblemCode = Literal[
    "too_many_edits",
    "no_edits",
    "empty_line",
    "line_too_long",
    "multiline",
    "not_found",
    "ambiguous",
    "heading_invalid",
]
Outcome = Literal["added", "present", "replaced", "removed"]

# One or more '#', whitespace, then text. Used both to validate `heading` and to find headings in a document.
_HEADING = re.compile(r"(#+)[ \t]+\S.*")
_FENCES = ("```", "~~~")


def _op_required(schema: dict[str, Any]) -> None:
    """On the wire `op` names the edit (it is the union's discriminator): required there, though code may omit it."""
    schema["required"] = ["op", *schema.get("required", [])]


class _EditModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_op_required)


class AddEdit(_EditModel):
    """Add `line` unless it is already present; optionally at the end of the `heading` section."""

    op: Literal["add"] = "add"
    line: str
    heading: str | None = None


class ReplaceEdit(_EditModel):
    """Replace the one line equal to `old` with `new`."""

    op: Literal["replace"] = "replace"
    old: str
    new: str


class RemoveEdit(_EditModel):
    """Remove the one line equal to `line`."""

    op: Literal["remove"] = "remove"
    line: str


Edit = Annotated[AddEdit | ReplaceEdit | RemoveEdit, Field(discriminator="op")]

MALFORMED_EDITS = "edits are malformed: each is add{line,heading?}, replace{old,new} or remove{line}"
"""What edits that are not this wire format are answered with: pydantic's own message would quote the text."""


class InvalidEdits(InvalidInput):
    """Edits that are malformed (`MALFORMED_EDITS`) or rejected by the document (with their `problems`)."""

    code = "INVALID_EDITS"


@dataclass(frozen=True)
class EditProblem:
    """Why edit `index` failed (-1 = the call as a whole). Deliberately holds no text."""

    index: int
    reason: ProblemCode


class EditsRejected(ValueError):
    """At least one edit failed, so none was applied; `problems` lists every failure found."""

    def __init__(self, problems: Sequence[EditProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("edits rejected: " + ", ".join(f"{p.index}:{p.reason}" for p in self.problems))


@dataclass(frozen=True)
class EditResult:
    text: str
    changed: bool
    outcomes: tuple[Outcome, ...]  # one per edit, in order


class _EditFailed(Exception):
    def __init__(self, reason: ProblemCode) -> None:
        super().__init__(reason)
        self.reason = reason


def utf8_len(s: str) -> int:
    """Size limits are in UTF-8 bytes, the unit storage and model context are billed in."""
    return len(s.encode("utf-8", "surrogatepass"))


def apply_edits(text: str, edits: Sequence[Edit]) -> EditResult:
    """Apply `edits` in order to `text`, or raise `EditsRejected` naming every failing edit.

    Each edit sees the text as left by the earlier ones. A failed edit is skipped so the later ones are
    still checked, but any failure rejects the whole call: the caller never gets a partial result.
    """
    if not edits:
        raise EditsRejected([EditProblem(-1, "no_edits")])
    if len(edits) > MAX_EDITS:
        raise EditsRejected([EditProblem(-1, "too_many_edits")])

    lines = _split(text)
    eol = "\r\n" if "\r\n" in text else "\n"
    outcomes: list[Outcome] = []
    problems: list[EditProblem] = []
    for index, edit in enumerate(edits):
        reasons = _check(edit)
        if not reasons:
            try:
                outcomes.append(_apply_one(lines, eol, edit))
            except _EditFailed as failed:
                reasons = [failed.reason]
        problems.extend(EditProblem(index, reason) for reason in reasons)
    if problems:
        raise EditsRejected(problems)

    new_text = "".join(lines)
    if text and not text.endswith("\n") and lines and _ending(lines[-1]):
        # The document's 'no final newline' state holds for the whole call, even through an edit that
        # emptied it or removed its last line. An unterminated empty last line already says so: stripping
        # again would drop a blank line.
        new_text = new_text.removesuffix(eol) if new_text.endswith(eol) else new_text[:-1]
    return EditResult(text=new_text, changed=new_text != text, outcomes=tuple(outcomes))


def rewrite_written(edit: Edit, rewrite: Callable[[str], str]) -> Edit:
    """`edit` with the text it writes into the document (an add's line and heading, a replace's new line) passed
    through `rewrite`; the text it only has to find (a replace's old line, a removed line) stays as it is."""
    match edit:
        case AddEdit(line=line, heading=heading):
            return edit.model_copy(
                update={"line": rewrite(line), "heading": None if heading is None else rewrite(heading)}
            )
        case ReplaceEdit(new=new):
            return edit.model_copy(update={"new": rewrite(new)})
        case RemoveEdit():
            return edit
        case _:
            assert_never(edit)


def _check(edit: Edit) -> list[ProblemCode]:
    """Shape problems of one edit, independent of the document (deduplicated, stable order)."""
    match edit:
        case AddEdit(line=line, heading=heading):
            found = [_text_problem(line)]
            if heading is not None:
                found.append(_text_problem(heading, heading=True))
        case ReplaceEdit(old=old, new=new):
            found = [_text_problem(old), _text_problem(new)]
        case RemoveEdit(line=line):
            found = [_text_problem(line)]
        case _:
            assert_never(edit)
    return list(dict.fromkeys(p for p in found if p is not None))


def _text_problem(s: str, *, heading: bool = False) -> ProblemCode | None:
    if "\n" in s or "\r" in s:
        return "multiline"
    if utf8_len(s) > MAX_LINE_BYTES:
        return "line_too_long"
    if heading:
        return None if _HEADING.fullmatch(s.rstrip()) else "heading_invalid"
    return None if s.strip() else "empty_line"


def _apply_one(lines: list[str], eol: str, edit: Edit) -> Outcome:
    match edit:
        case AddEdit(line=line, heading=heading):
            return _add(lines, eol, line.rstrip(), None if heading is None else heading.rstrip())
        case ReplaceEdit(old=old, new=new):
            i = _find_one(lines, old)
            lines[i] = new.rstrip() + _ending(lines[i])
            return "replaced"
        case RemoveEdit(line=line):
            _remove(lines, _find_one(lines, line))
            return "removed"
        case _:
            assert_never(edit)


def _add(lines: list[str], eol: str, line: str, heading: str | None) -> Outcome:
    if any(raw.rstrip() == line for raw in lines):
        return "present"
    if heading is None:
        _insert(lines, len(lines), line, eol)
        return "added"

    levels = _heading_levels(lines)
    start = next((i for i, raw in enumerate(lines) if levels[i] and raw.rstrip() == heading), None)
    if start is None:
        if lines and lines[-1].strip():
            _insert(lines, len(lines), "", eol)
        _insert(lines, len(lines), heading, eol)
        _insert(lines, len(lines), line, eol)
        return "added"

    # The section runs to the next heading of the same or a higher level (subsections belong to it);
    # the new line goes right after its last non-blank line, keeping the blank spacing before what follows.
    end = start + 1
    while end < len(lines) and not (0 < levels[end] <= levels[start]):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    _insert(lines, end, line, eol)
    return "added"


def _find_one(lines: list[str], target: str) -> int:
    """Index of the single line equal to `target`; anything else is a refusal, never a guess."""
    wanted = target.rstrip()
    hits = [i for i, raw in enumerate(lines) if raw.rstrip() == wanted]
    if not hits:
        raise _EditFailed("not_found")
    if len(hits) > 1:
        raise _EditFailed("ambiguous")
    return hits[0]


def _split(text: str) -> list[str]:
    """Lines with their own endings kept, so untouched lines round-trip byte for byte.

    Splits on '\\n' only (not `str.splitlines`, which also breaks on form feeds, U+2028 and the like).
    """
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _ending(raw: str) -> str:
    if raw.endswith("\r\n"):
        return "\r\n"
    return "\n" if raw.endswith("\n") else ""


def _insert(lines: list[str], i: int, content: str, eol: str) -> None:
    """Insert a line; at the very end, keep the document's 'no final newline' state if it had one."""
    if i == len(lines) and lines and not _ending(lines[-1]):
        lines[-1] += eol
        lines.append(content)
    else:
        lines.insert(i, content + eol)


def _remove(lines: list[str], i: int) -> None:
    """Remove a line; removing an unterminated last line leaves the new last line unterminated."""
    removed = lines.pop(i)
    if not _ending(removed) and lines:
        last = lines[-1]
        lines[-1] = last[: len(last) - len(_ending(last))]


def _heading_levels(lines: list[str]) -> list[int]:
    """Heading level per line (0 = not a heading); '#' lines inside code fences are not headings."""
    levels: list[int] = []
    in_fence = False
    for raw in lines:
        content = raw.rstrip()
        if content.lstrip().startswith(_FENCES):
            in_fence = not in_fence
            levels.append(0)
            continue
        match = None if in_fence else _HEADING.fullmatch(content)
        levels.append(len(match.group(1)) if match else 0)
    return levels
