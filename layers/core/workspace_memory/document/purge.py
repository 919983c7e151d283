"""Forgetting a line everywhere (docs/architecture.md#forgetting-a-line): every retained version whose text holds it
becomes a stub.

The owner names one exact line. The head must not hold it (edit it first: the head is what everyone reads
and recalls). Every other version that holds it loses its ciphertext and keeps its number, op, author,
creation time, size and ciphertext hash, with `purgedAt`/`purgedBy`; reading it answers 410, Undo to it is
refused. The stubs are written in transactions that also check the head has not moved and the caller is
still an owner, so a version holding the line cannot slip in between the scan and the write.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from workspace_memory.document.versions import document_context, head_text, utf8_size
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Conflict, Forbidden, InvalidInput
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store import document_queries, keys
from workspace_memory.store.changes import Change, HeadAt, Label, PurgeVersion
from workspace_memory.store.head import Head
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.workspaces.access import load_caller

MAX_LINE_BYTES = 500
"""As an edit's line (docs/architecture.md#capture): a line is what the assistant and the editor write one at a time."""

PURGE_BATCH = 50
"""Stubs per transaction (plus the head and owner checks): well under DynamoDB's 100 actions."""

PURGE_ATTEMPTS = 3


class LineInHead(Conflict):
    """The current text holds the line: a purge would leave it where everyone reads it. Edit it out first."""

    code = "LINE_IN_HEAD"


@dataclass(frozen=True)
class Purged:
    versions: list[int]
    """The versions that became stubs now (a repeated purge finds none)."""


def check_line(line: str) -> None:
    """1-500 UTF-8 bytes, one line, something visible on it (a blank line would match every blank line of
    every version). The message never quotes it."""
    try:
        size = utf8_size(line)
    except InvalidInput:
        raise InvalidInput("line must be valid Unicode text (no lone surrogates)") from None
    if len(line.splitlines()) > 1 or not 1 <= size <= MAX_LINE_BYTES or not as_seen(line):
        raise InvalidInput(f"line must be 1 to {MAX_LINE_BYTES} UTF-8 bytes, not blank, with no line break")


def as_seen(line: str) -> str:
    """A line as a person sees it: composed (NFC) and without its trailing blanks or carriage return, which
    an editor does not show. Leading blanks stay: indentation is visible and means something in Markdown."""
    return unicodedata.normalize("NFC", line).rstrip()


def holds_line(text: str, line: str) -> bool:
    """Whether one of the text's lines, split on any line break (`\n`, `\r\n`, `\r`, U+2028 ...), reads as
    `line` does."""
    wanted = as_seen(line)
    return any(as_seen(candidate) == wanted for candidate in text.splitlines())


class PurgeService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

    def purge(self, user_id: str, workspace_id: str, line: str) -> Purged:
        check_line(line)
        for _ in range(PURGE_ATTEMPTS):
            try:
                return self._purge(user_id, workspace_id, line)
            except TransactionCancelled as exc:
                if Label.ACCESS in exc.failed():
                    raise Forbidden("only the workspace owner may do this") from None
                # The head moved (it may hold the line now) or a version expired away: look again.
        raise Conflict("the memory kept changing during the purge; try again")

    def _purge(self, user_id: str, workspace_id: str, line: str) -> Purged:
        caller, (head_item,) = load_caller(self._table, workspace_id, user_id, [keys.head(workspace_id)])
        caller.require_owner()
        head = Head.from_item(head_item)
        if holds_line(head_text(self._cipher, workspace_id, head), line):
            raise LineInHead("the current version holds this line: edit it out first")
        doomed = self._holding(workspace_id, head.version, line)
        at = iso(self._clock.now())
        for start in range(0, len(doomed), PURGE_BATCH):
            batch = doomed[start : start + PURGE_BATCH]
            stubs: list[Change] = [PurgeVersion(workspace_id, number, at, user_id) for number in batch]
            self._table.transact([*stubs, HeadAt(workspace_id, head.version), caller.still_owner()])
        return Purged(doomed)

    def _holding(self, workspace_id: str, head_version: int, line: str) -> list[int]:
        """The versions still holding ciphertext whose text holds the line. The head's own version holds the
        head's text; an expired version DynamoDB has not deleted yet is purged too (its bytes are still there)."""
        found: list[int] = []
        for version in document_queries.versions(self._table, workspace_id):
            number, ciphertext = version.version, version.ciphertext
            if number == head_version or ciphertext is None:
                continue
            if holds_line(unseal(self._cipher, ciphertext, document_context(workspace_id, number)), line):
                found.append(number)
        return found
