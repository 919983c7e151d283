"""Anthropic's memory tool served over this service: the six commands on `/memories` (memory_paths.py).

Nothing here writes anything itself. A document write becomes at most five line edits through `remember` (the
capture route: the fence, redaction, the policy), an entry write a `save_memory` through the agent entry route,
a delete a `forget_memory` proposal; so `read_only` turns every write into a proposal or candidate, and the
answer says so. A write checks the revision the agent last viewed of that file: if the file moved since, it is
refused as a conflict (`STALE_BASE_VERSION` for the document, `STALE_REVISION` for an entry) before anything is
admitted. For the document, a move between this read and the write is the capture fence's conflict (the same
code); the agent entry route takes no base revision, so for an entry that short window is not caught.
`MemoryTool` is the plain class a Messages-API loop calls; the MCP tool `memory` calls the same one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel, TypeAdapter, ValidationError

from workspace_memory.api.models.automation import EntrySaveOut, ForgetProposalOut, RecallOut
from workspace_memory.api.models.base import FindingOut
from workspace_memory.api.models.entries import AgentEntryOut
from workspace_memory.api.models.entry_pages import AgentEntriesOut
from workspace_memory.kernel import errors
from workspace_memory.kernel.terms import Outcome, RecallStatus
from workspace_memory.turns.framing import block_seal_of, closing_line

from .delegation import ApiError, ApiUnavailable, RememberOut, unavailable
from .memory_paths import (
    DOCUMENT,
    ENTRIES,
    ROOT,
    Create,
    Delete,
    Document,
    EntriesDir,
    EntryFile,
    Insert,
    MemoryCommand,
    Rename,
    Root,
    StrReplace,
    Target,
    View,
    entry_path,
    parse,
)

LISTED = 50
_HEADING = re.compile(r"#+[ \t]+\S.*")
_COMMANDS: TypeAdapter[View | Create | StrReplace | Insert | Delete | Rename] = TypeAdapter(MemoryCommand)


class Memory(Protocol):
    """What the adapter needs of the service: the calls `Delegation` makes under the key session."""

    def recall(self) -> RecallOut: ...
    def remember(self, edits: list[dict[str, Any]], base_version: int) -> RememberOut: ...
    def save_entry(self, fields: dict[str, Any]) -> EntrySaveOut: ...
    def read_entry(self, entry_id: str) -> AgentEntryOut: ...
    def forget_entry(self, entry_id: str) -> ForgetProposalOut: ...
    def list_entries(self, limit: int, cursor: str | None = None, key: str | None = None) -> AgentEntriesOut: ...


class MemoryAnswer(BaseModel):
    """What a command came to: the text the model reads, and for a write its outcome."""

    result: str
    outcome: Literal["viewed", "committed", "proposal", "noop", "refused"]


class MemoryTool:
    """The memory tool over one key session. Holds the revision last viewed per file (its only state)."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._seen: dict[str, int] = {}

    def tool_result(self, tool_input: Mapping[str, Any]) -> dict[str, Any]:
        """A Messages-API `tool_result`'s content and `is_error` for one `tool_use` input of the memory tool."""
        try:
            return {"content": self.run(_COMMANDS.validate_python(tool_input)).result, "is_error": False}
        except ValidationError as exc:
            return {"content": invalid_arguments(exc), "is_error": True}
        except ApiError as exc:
            return {"content": str(exc), "is_error": True}
        except ApiUnavailable as exc:
            return {"content": unavailable(exc), "is_error": True}

    def run(self, command: View | Create | StrReplace | Insert | Delete | Rename) -> MemoryAnswer:
        match command:
            case View(path=path, view_range=view_range):
                return self._view(parse(path), path, view_range)
            case Create(path=path, file_text=file_text):
                return self._save(_writable_entry(parse(path), "create"), path, file_text, None)
            case StrReplace(path=path, old_str=old, new_str=new):
                return self._replace(parse(path), path, old, new)
            case Insert(path=path, insert_line=line, insert_text=inserted):
                return self._insert(parse(path), path, line, inserted)
            case Delete(path=path):
                return self._forget(_writable_entry(parse(path), "delete"), path)
            case Rename(old_path=old_path, new_path=new_path):
                return self._rename(old_path, new_path)

    # -- view ----------------------------------------------------------------------------------------------

    def _view(self, target: Target, path: str, view_range: list[int] | None) -> MemoryAnswer:
        match target:
            case Root():
                listing = f"{ROOT}/{DOCUMENT}  (the workspace document)\n{ROOT}/{ENTRIES}/  (memory entries)"
                return MemoryAnswer(result=f"Directory {ROOT}:\n{listing}", outcome="viewed")
            case EntriesDir():
                page = self._memory.list_entries(LISTED)
                rows = [f"{entry_path(r.entry_id, None)}  {r.title or ''}".rstrip() for r in page.entries]
                more = "\n(more entries than shown)" if page.next_cursor else ""
                found = "\n".join(rows) or "(no entries)"
                return MemoryAnswer(result=f"Directory {ROOT}/{ENTRIES}:\n{found}{more}", outcome="viewed")
            case Document():
                recall = self._recall()
                lines, revision = document_lines(recall), recall.revision or 0
                self._seen[DOCUMENT] = revision
                head = f"{path} (revision {revision}, recall {recall.status})"
            case EntryFile():
                entry = self._entry(target)
                lines, revision = entry_text(entry).split("\n"), entry.revision
                self._seen[entry.entry_id] = revision
                head = f"{entry_path(entry.entry_id, entry.key)} (entry {entry.entry_id}, revision {revision}, title "
                head += f"{entry.title!r})"
        return MemoryAnswer(result=f"{head} with line numbers:\n{numbered(lines, view_range)}", outcome="viewed")

    # -- writes --------------------------------------------------------------------------------------------

    def _replace(self, target: Target, path: str, old: str, new: str) -> MemoryAnswer:
        if isinstance(target, Document):
            recall = self._fresh_document()
            lines = document_lines(recall)
            text = "\n".join(lines)
            start = _one_place(text, old)
            edits = line_edits(lines, text[:start] + new + text[start + len(old) :])
            return self._remember(edits, recall.revision or 0)
        entry = self._fresh_entry(_writable_entry(target, "str_replace"))
        text = entry_text(entry)
        start = _one_place(text, old)
        return self._save(EntryFile(key=entry.key), path, text[:start] + new + text[start + len(old) :], entry)

    def _insert(self, target: Target, path: str, after: int, inserted: str) -> MemoryAnswer:
        if isinstance(target, Document):
            recall = self._fresh_document()
            lines = document_lines(recall)
            _in_range(after, len(lines))
            heading = next((line for line in reversed(lines[:after]) if _HEADING.fullmatch(line.rstrip())), None)
            adds = [
                {"op": "add", "line": line, **({"heading": heading} if heading else {})} for line in _lines(inserted)
            ]
            return self._remember(adds, recall.revision or 0)
        entry = self._fresh_entry(_writable_entry(target, "insert"))
        lines = entry_text(entry).split("\n")
        _in_range(after, len(lines))
        text = "\n".join([*lines[:after], *inserted.removesuffix("\n").split("\n"), *lines[after:]])
        return self._save(EntryFile(key=entry.key), path, text, entry)

    def _rename(self, old_path: str, new_path: str) -> MemoryAnswer:
        old, new = parse(old_path), parse(new_path)  # both paths judged before anything is read
        source, target = _writable_entry(old, "rename"), _writable_entry(new, "rename")
        if target.key is None:
            raise ApiError.of(errors.PathNotMapped, f"rename to {ROOT}/{ENTRIES}/<namespace>/<name>.md (a new key)")
        if self._memory.list_entries(1, key=target.key).entries:
            raise ApiError.of(errors.CommandNotSupported, "the new path names an entry already: rename to a new key")
        entry = self._entry(source)
        if entry.pinned:  # the forget after the copy would be refused: copy nothing
            raise ApiError.of(errors.EntryPinned, f"entry {entry.entry_id} is pinned: a person may rename it")
        saved = self._save(target, new_path, entry_text(entry), entry)
        if saved.outcome not in ("committed", "proposal"):
            return saved
        forgot = self._forget(EntryFile(entry_id=entry.entry_id), old_path)
        return MemoryAnswer(result=f"{saved.result}\n{forgot.result}", outcome=saved.outcome)

    def _remember(self, edits: list[dict[str, Any]], base: int) -> MemoryAnswer:
        path = f"{ROOT}/{DOCUMENT}"
        if not edits:
            return MemoryAnswer(result=f"noop: {path} already says that", outcome="noop")
        answer = self._memory.remember(edits, base)
        match answer.outcome:
            case Outcome.COMMITTED:
                self._seen[DOCUMENT] = answer.version or base
                done = f"committed: {path} is now revision {answer.version}{redacted(answer.redactions)}"
                return MemoryAnswer(result=done, outcome="committed")
            case Outcome.PROPOSAL:
                why = "workspace memory is read_only: a person applies or dismisses the edit"
                return _proposed(path, why + redacted(answer.redactions))
            case Outcome.CONFLICT:
                raise ApiError.of(errors.StaleBaseVersion, f"{path} moved since revision {base}: view it again")
        return _other(answer.outcome, path, answer.predicate)

    def _save(self, target: EntryFile, path: str, text: str, entry: AgentEntryOut | None) -> MemoryAnswer:
        """`text` as the entry `target` names; `entry` (a revision or a rename): keep its type, title and scope."""
        if target.key is None:
            raise ApiError.of(errors.PathNotMapped, f"new entries are {ROOT}/{ENTRIES}/<namespace>/<name>.md (a key)")
        summary, _, body = text.partition("\n")
        fields: dict[str, Any] = {"type": "fact", "title": target.key, "scope": "workspace"}
        if entry is not None:
            fields = {"type": entry.type, "title": entry.title, "scope": entry.scope}
        answer = self._memory.save_entry({**fields, "summary": summary, "body": body, "key": target.key})
        match answer.outcome:
            case Outcome.COMMITTED:
                assert answer.entry_id is not None  # the route's contract
                assert answer.revision is not None
                self._seen[answer.entry_id] = answer.revision
                shown = entry_path(answer.entry_id, target.key)
                return MemoryAnswer(
                    result=f"committed: {shown} (entry {answer.entry_id}, revision {answer.revision})"
                    + redacted(answer.redactions),
                    outcome="committed",
                )
            case Outcome.PROPOSAL if answer.possible_conflicts:
                contradicted = ", ".join(f"{c.entry_id}@{c.revision}" for c in answer.possible_conflicts)
                why = f"held for review: it may contradict entries {contradicted}"
                return _proposed(path, f"{why}; candidate {answer.candidate_id}, a member decides")
            case Outcome.PROPOSAL:
                return _proposed(
                    path, f"workspace memory is read_only: candidate {answer.candidate_id}, a member decides"
                )
        return _other(answer.outcome, path, answer.predicate)

    def _forget(self, target: EntryFile, path: str) -> MemoryAnswer:
        entry = self._entry(target)
        answer = self._memory.forget_entry(entry.entry_id)
        if answer.outcome is Outcome.PROPOSAL:
            return _proposed(path, f"forgetting is never automatic: candidate {answer.candidate_id}, a member decides")
        return _other(answer.outcome, path, answer.predicate)

    # -- reads ---------------------------------------------------------------------------------------------

    def _entry(self, target: EntryFile) -> AgentEntryOut:
        entry_id = target.entry_id
        if entry_id is None:
            assert target.key is not None
            rows = self._memory.list_entries(1, key=target.key).entries
            if not rows:
                raise ApiError.of(errors.EntryNotFound, f"no entry has key {target.key}")
            entry_id = rows[0].entry_id
        return self._memory.read_entry(entry_id)

    def _fresh_entry(self, target: EntryFile) -> AgentEntryOut:
        entry = self._entry(target)
        seen = self._seen.get(entry.entry_id, entry.revision)
        if seen != entry.revision:
            raise ApiError.of(
                errors.StaleRevision, f"entry {entry.entry_id} moved since revision {seen}: view it again"
            )
        if entry.key is None:
            raise ApiError.of(
                errors.CommandNotSupported, f"entry {entry.entry_id} has no key: only a person revises it"
            )
        return entry

    def _recall(self) -> RecallOut:
        """The document as recalled; memory `off` is the entry reads' refusal, `MEMORY_OFF`, not an empty file."""
        recall = self._memory.recall()
        if recall.status == RecallStatus.OFF:
            raise ApiError.of(errors.MemoryOff, "workspace memory is off: the document is neither read nor written")
        return recall

    def _fresh_document(self) -> RecallOut:
        recall = self._recall()
        revision = recall.revision or 0
        seen = self._seen.get(DOCUMENT, revision)
        if seen != revision:
            raise ApiError.of(errors.StaleBaseVersion, f"{ROOT}/{DOCUMENT} moved since revision {seen}: view it again")
        return recall


def document_lines(recall: RecallOut) -> list[str]:
    """The document's lines as recalled: the text between the block's preamble and its sealed closing line (a
    marker-like line shows as the recall's placeholder). Not `ok`: no lines."""
    seal = block_seal_of(recall.block)
    if recall.status != "ok" or seal is None:
        return []
    body = recall.block.partition("\n\n")[2]
    return body[: body.rindex(closing_line(seal))].removesuffix("\n").split("\n")


def entry_text(entry: AgentEntryOut) -> str:
    """An entry as a file: its summary on the first line, its body after."""
    return entry.summary + (f"\n{entry.body}" if entry.body else "")


def numbered(lines: list[str], view_range: list[int] | None) -> str:
    start, end = (1, len(lines)) if view_range is None else (view_range[0], view_range[1])
    end = len(lines) if end == -1 else end
    if lines and not 1 <= start <= end <= len(lines):
        raise ApiError.of(errors.LineOutOfRange, f"view_range must lie within lines 1-{len(lines)}")
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, end + 1) if lines)


def line_edits(before: list[str], after_text: str) -> list[dict[str, Any]]:
    """The document's line edits that turn `before` into `after_text`: lines changed in place are replaced,
    lines gone removed, new lines added (the service puts an added line at the end of its section)."""
    after = after_text.split("\n")
    first = 0
    while first < min(len(before), len(after)) and before[first] == after[first]:
        first += 1
    tail = 0
    while tail < min(len(before), len(after)) - first and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    old, new = before[first : len(before) - tail], after[first : len(after) - tail]
    heading = next((line for line in reversed(before[:first]) if _HEADING.fullmatch(line.rstrip())), None)
    edits: list[dict[str, Any]] = []
    for i in range(max(len(old), len(new))):
        was, now = (old[i] if i < len(old) else ""), (new[i] if i < len(new) else "")
        if was.strip() and now.strip():
            edits.append({"op": "replace", "old": was, "new": now})
        elif was.strip():
            edits.append({"op": "remove", "line": was})
        elif now.strip():
            edits.append({"op": "add", "line": now, **({"heading": heading} if heading else {})})
    return edits


def redacted(findings: list[FindingOut] | None) -> str:
    """What redaction took out before storing, by kind and count (never the text), so the agent knows the stored
    text is not what it sent."""
    if not findings:
        return ""
    return "; redacted before storing: " + ", ".join(f"{f.count} {f.kind}" for f in findings)


def invalid_arguments(exc: ValidationError) -> str:
    """A validation failure as `INVALID_ARGUMENTS`: where and pydantic's stable error type, never the input."""
    problems = sorted({f"{'.'.join(str(p) for p in e['loc']) or 'arguments'} ({e['type']})" for e in exc.errors()})
    return f"{errors.InvalidArguments.code}: the arguments do not fit the tool's schema: {', '.join(problems[:8])}"


def _writable_entry(target: Target, command: str) -> EntryFile:
    if isinstance(target, EntryFile):
        return target
    if isinstance(target, Document):
        raise ApiError.of(errors.CommandNotSupported, f"{command} on the document: edit it with str_replace or insert")
    raise ApiError.of(errors.CommandNotSupported, f"{command} takes a file, not a directory")


def _one_place(text: str, old: str) -> int:
    count = text.count(old)
    if count == 0:
        raise ApiError.of(errors.TextNotFound, "old_str does not occur in the file")
    if count > 1:
        raise ApiError.of(errors.TextAmbiguous, f"old_str occurs {count} times: make it name one place")
    return text.index(old)


def _in_range(after: int, count: int) -> None:
    if after > count:
        raise ApiError.of(errors.LineOutOfRange, f"insert_line must be 0-{count}")


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _proposed(path: str, why: str) -> MemoryAnswer:
    return MemoryAnswer(result=f"proposal, not saved: {path} is unchanged; {why}", outcome="proposal")


def _other(outcome: Outcome, path: str, predicate: str | None) -> MemoryAnswer:
    if outcome is Outcome.REFUSED:
        return MemoryAnswer(result=f"refused (predicate: {predicate}): {path} is unchanged", outcome="refused")
    return MemoryAnswer(result=f"noop: {path} is unchanged (memory is off or it says that already)", outcome="noop")
