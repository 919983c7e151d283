"""A deterministic, offline model provider.

It exists so whole turns (tool calls, memory, memory entries, working notes) run locally and in tests
without a model: it follows directives in the last user message as tool calls, one per round, and its final
answer quotes the memory and notes sections of the system prompt it was given in that round, so a
transcript shows exactly what each round saw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workflows.providers.base import (
    JUDGE_HEADING,
    MEMORY_HEADING,
    NOTES_CLOSE,
    NOTES_HEADING,
    NOTES_OPEN,
    READING_PREFIX,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
)
from workflows.tools import ToolName

_SECTION_PREFIX = "### "


@dataclass(frozen=True)
class Directive:
    """One instruction parsed from the user message: `kind` is remember/forget/note/clear/show, or
    save/rule/read/drop/search/verify for memory entries."""

    kind: str
    text: str = ""


_PREFIXED = ("remember", "forget", "note", "save", "private", "rule", "read", "drop", "search", "verify")
SAVED_ENTRY = re.compile(r"Saved as entry (\S+) \(revision")
"""How a committed save_memory result names its entry (the tool's words in `workflows.tools`)."""
_BARE = {"clear notes": "clear", "show notes": "show"}


def parse_directives(text: str) -> tuple[list[Directive], list[str]]:
    """Split a user message into directives (in order) and the remaining non-empty lines."""
    directives: list[Directive] = []
    other: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        lowered = line.lower()
        directive = _parse_line(line, lowered)
        if directive is None:
            other.append(line)
        else:
            directives.append(directive)
    return directives, other


def _parse_line(line: str, lowered: str) -> Directive | None:
    for kind in _PREFIXED:
        prefix = kind + ":"
        if lowered.startswith(prefix):
            return Directive(kind, line[len(prefix) :].strip())
    bare = _BARE.get(lowered.rstrip(" .:!"))
    return Directive(bare) if bare else None


def extract_section(system_prompt: str, heading: str) -> str | None:
    """Return the section starting at `heading` (heading line included), or None if absent.

    The section runs until the next line starting with "### " or the end of the text, with trailing
    blank lines dropped. Lines inside a closed NOTES_OPEN/NOTES_CLOSE fence never end a section, so
    agent-written notes containing markdown headings cannot cut the block short.
    """
    lines = system_prompt.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(heading)), None)
    if start is None:
        return None
    end = len(lines)
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if line.strip() == NOTES_OPEN:
            close = _find_line(lines, NOTES_CLOSE, i + 1)
            if close is not None:
                i = close + 1
                continue
        if line.startswith(_SECTION_PREFIX):
            end = i
            break
        i += 1
    section = lines[start:end]
    while section and not section[-1].strip():
        section.pop()
    return "\n".join(section)


def extract_notes(system_prompt: str) -> str:
    """Return the raw working-notes text fenced inside the notes section ("" when there is none)."""
    section = extract_section(system_prompt, NOTES_HEADING)
    if section is None:
        return ""
    lines = section.splitlines()
    open_at = _find_line(lines, NOTES_OPEN, 0)
    if open_at is None:
        return ""
    close_at = _find_line(lines, NOTES_CLOSE, open_at + 1)
    if close_at is None:
        return ""
    return "\n".join(lines[open_at + 1 : close_at])


def _find_line(lines: list[str], marker: str, start: int) -> int | None:
    return next((i for i in range(start, len(lines)) if lines[i].strip() == marker), None)


class ScriptedProvider:
    """Follows `remember:` / `forget:` / `note:` / `clear notes` / `show notes` directives, and for memory
    entries `save: title | summary [| body]` (a fact), `private: …` (the same in member scope, the user's own),
    `rule: title | summary [| quote]` (a rule; the quote,
    when given, is that very text of the message), `read: <entryId>`, `drop: <entryId>` (`forget_memory`:
    a proposal; `forget:` already removes a document line), `search: <query>` (search_memory, default k) and
    `verify: <entryId> | <revision> | <kind> <ref> <sha256>[; …]` (verify_memory on those cited sources);
    `saved` as the id names the entry the latest save of this turn committed.

    Stateless: the next directive is found by counting the tool results already in the conversation
    after the last user message, so the same request always yields the same response and the
    provider survives activity retries and worker restarts.
    """

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Issue the next directive's tool call, or the final answer once all are done. A consolidation judging
        request (its system prompt begins `JUDGE_HEADING`) is answered with the similarity rule's reading."""
        if request.system_prompt.startswith(JUDGE_HEADING):
            return ModelResponse(text=_reading(request.messages), tool_calls=[], stop_reason="end_turn")
        user_index = _last_user_index(request.messages)
        user_text = request.messages[user_index].text if user_index is not None else ""
        after = request.messages[user_index + 1 :] if user_index is not None else request.messages
        results = [result for message in after for result in message.tool_results]
        directives, other_lines = parse_directives(user_text)

        if len(results) < len(directives):
            n = len(results)
            call = _tool_call(directives[n], f"call-{n + 1}", request.system_prompt, results)
            return ModelResponse(text="", tool_calls=[call], stop_reason="tool_use")
        return ModelResponse(
            text=_final_answer(other_lines, results, request.system_prompt),
            tool_calls=[],
            stop_reason="end_turn",
        )


def _reading(messages: list[Message]) -> str:
    lines = [line for m in messages if m.role == "user" for line in m.text.splitlines()]
    found = [line[len(READING_PREFIX) :].strip() for line in lines if line.startswith(READING_PREFIX)]
    return found[-1] if found else "unrelated"


def _last_user_index(messages: list[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return None


def _tool_call(directive: Directive, call_id: str, system_prompt: str, results: list[ToolResult]) -> ToolCall:
    name: ToolName
    arguments: dict[str, Any]
    if directive.kind == "remember":
        name, arguments = ToolName.REMEMBER, {"edits": [{"op": "add", "line": directive.text}]}
    elif directive.kind == "forget":
        name, arguments = ToolName.REMEMBER, {"edits": [{"op": "remove", "line": directive.text}]}
    elif directive.kind == "note":
        # Read the notes from *this* round's prompt: an earlier `note:` of the same turn has already
        # been folded into it, so consecutive notes accumulate.
        existing = extract_notes(system_prompt)
        notes = f"{existing}\n{directive.text}" if existing else directive.text
        name, arguments = ToolName.NOTES_UPDATE, {"notes": notes}
    elif directive.kind == "clear":
        name, arguments = ToolName.NOTES_CLEAR, {}
    elif directive.kind == "show":
        name, arguments = ToolName.NOTES_GET, {}
    elif directive.kind in ("save", "private", "rule"):
        name, arguments = ToolName.SAVE_MEMORY, _entry_arguments(directive)
    elif directive.kind == "read":
        name, arguments = ToolName.READ_MEMORY, {"entryId": _entry_id(directive.text, results)}
    elif directive.kind == "drop":
        name, arguments = ToolName.FORGET_MEMORY, {"entryId": _entry_id(directive.text, results)}
    elif directive.kind == "search":
        name, arguments = ToolName.SEARCH_MEMORY, {"query": directive.text}
    elif directive.kind == "verify":
        name, arguments = ToolName.VERIFY_MEMORY, _verify_arguments(directive.text, results)
    else:  # pragma: no cover - parse_directives only produces the kinds above
        raise ValueError(f"unknown directive kind {directive.kind!r}")
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _entry_arguments(directive: Directive) -> dict[str, Any]:
    parts = [part.strip() for part in directive.text.split("|")]
    title, summary = parts[0], parts[1] if len(parts) > 1 else parts[0]
    arguments: dict[str, Any] = {"type": "fact", "title": title, "summary": summary}
    if directive.kind == "private":
        arguments["scope"] = "member"
    if directive.kind == "rule":
        arguments["type"] = "rule"
        if len(parts) > 2:
            arguments["quote"] = parts[2]
    elif len(parts) > 2:
        arguments["body"] = parts[2]
    return arguments


def _verify_arguments(text: str, results: list[ToolResult]) -> dict[str, Any]:
    """`<entryId> | <revision> | <kind> <ref> <sha256>[; …]`; a revision that is not a number is passed on as it is
    (the activity refuses it), as is a source without three parts (its missing fields left out)."""
    entry, _, rest = (part.strip() for part in text.partition("|"))
    revision, _, cited = (part.strip() for part in rest.partition("|"))
    evidence = []
    for source in filter(None, (s.split() for s in cited.split(";"))):
        evidence.append(dict(zip(("kind", "ref", "sha256"), source, strict=False)))
    return {
        "entryId": _entry_id(entry, results),
        "revision": int(revision) if revision.isdigit() else revision,
        "evidence": evidence,
    }


def _entry_id(text: str, results: list[ToolResult]) -> str:
    if text != "saved":
        return text
    saved = [m.group(1) for r in results if r.name == ToolName.SAVE_MEMORY and (m := SAVED_ENTRY.search(r.content))]
    return saved[-1] if saved else text


def _final_answer(other_lines: list[str], results: list[ToolResult], system_prompt: str) -> str:
    memory = extract_section(system_prompt, MEMORY_HEADING)
    notes = extract_section(system_prompt, NOTES_HEADING)
    parts = [f"Answer to: {other_lines[0] if other_lines else '(directives only)'}"]
    if results:
        parts.append("Tool results:")
        parts.extend(f"- {_result_line(result)}" for result in results)
    else:
        parts.append("Tool results: (none)")
    parts += ["Memory I was given:", memory or "(none)", "Working notes I was given:", notes or "(none)"]
    return "\n".join(parts)


def _result_line(result: ToolResult) -> str:
    # One line per result: escape newlines so multi-line content (e.g. notes) cannot blur the list.
    content = "\\n".join(result.content.splitlines())
    marker = "error: " if result.is_error else ""
    return f"{result.name} → {marker}{content}"
