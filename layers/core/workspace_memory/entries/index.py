"""The index and the rules recalled with the constitution (docs/architecture.md#the-index,
docs/architecture.md#rules): one line per visible active entry, rules with their bodies in a budget of their own.
A warm process keeps each revision's line and what it cites (`IndexLines`), so a recall decrypts only what
changed. Citations are judged before a line is given (docs/decisions/0078): an entry whose cited source is gone
is left out (`hidden`), one whose cited text changed is marked `[source changed]`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workspace_memory.document.versions import utf8_size
from workspace_memory.entries.citations import Citations, overall
from workspace_memory.entries.model import EntryText, Source, entry_context
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import CitationState, EntryScope, EntryStatus, EntryType
from workspace_memory.store import entry_queries
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.workspaces.key_binding import KeyBinding

INDEX_MAX_LINES = 100
INDEX_MAX_BYTES = 8000
INDEX_HEADING = "### Memory entries (index: one line per entry; read_memory opens one, search_memory finds more)"


@dataclass(frozen=True)
class Index:
    """The index section and the entries it names (for the receipt): ids and revisions, never text."""

    text: str
    recalled: tuple[tuple[str, int], ...]
    left_out: int
    hidden: int = 0
    """Entries not given because a cited source is gone or not visible to the user (counted, never named)."""


SOURCE_CHANGED = "[source changed]"
"""The marker of a line whose entry cites a text that no longer hashes as cited (read_memory shows which)."""


@dataclass(frozen=True)
class Line:
    """A revision's rendered line and what the revision cites (judged anew at every recall)."""

    text: str
    sources: tuple[Source, ...]


def marked(line: str, entry_id: str, state: CitationState | None) -> str:
    """`line` with `[source changed]` before the `[id]` that ends its first line when a cited text changed."""
    if state is not CitationState.CHANGED:
        return line
    first, newline, rest = line.partition("\n")
    tail = f" [{entry_id}]"
    first = first.removesuffix(tail) + f" {SOURCE_CHANGED}" + tail
    return first + newline + rest


def _index_line(text: EntryText, entry_id: str) -> str:
    """`- title — summary [id]`, and what the revision replaced as a dated note after it, so the replaced
    statement is read only as history of the current one (`[previously, until 2026-11-03: "…"]`)."""
    one_line = " ".join(f"{text.title} — {text.summary}".split())
    if text.previously is not None:
        before = " ".join(text.previously.summary.split())
        one_line += f' [previously, until {text.previously.until[:10]}: "{before}"]'
    return f"- {one_line} [{entry_id}]"


INDEX_CACHE_LINES = 20_000


class IndexLines:
    """A warm process's index lines, keyed by (workspace, entry, revision): a revision's text never changes,
    so a line never goes stale, and a new revision is a new key (docs/architecture.md#the-index: a warm process keeps
    each workspace's index). Bounded, least recently used out. It holds titles and summaries (rules: bodies too)
    and the revision's sources (ids and digests); a forgotten or superseded entry's line is simply never asked for
    again and ages out. Whether a source still holds is never cached: it is judged at every recall."""

    def __init__(self, size: int = INDEX_CACHE_LINES) -> None:
        self._size = size
        self._lines: dict[tuple[str, str, int], Line] = {}

    def get(self, key: tuple[str, str, int]) -> Line | None:
        line = self._lines.pop(key, None)
        if line is not None:
            self._lines[key] = line  # most recently used last
        return line

    def put(self, key: tuple[str, str, int], line: Line) -> None:
        if len(self._lines) >= self._size:
            del self._lines[next(iter(self._lines))]
        self._lines[key] = line


def visible_heads(table: Table, workspace_id: str, user_id: str, now: float) -> list[EntryRecord]:
    """The head of every active entry `user_id` may see at `now`, in entry id order (an agent memory past its
    window is gone, whether or not TTL deleted it yet): one Query per page of heads (a page holds ~1 MB), read
    once per recall for the rules and the index both."""
    return [
        head
        for _, head in entry_queries.entry_heads(table, workspace_id, page=1000)
        if isinstance(head, EntryRecord)
        and head.status is EntryStatus.ACTIVE  # a chain retired into another is history
        and (head.scope is not EntryScope.MEMBER or head.scope_owner == user_id)
        and not head.expired(now)
    ]


def _head_line(
    cipher: Cipher,
    workspace_id: str,
    head: EntryRecord,
    cache: IndexLines | None,
    render: Callable[[EntryText, str], str],
) -> Line:
    """A head's line, from the warm cache when its revision was seen before (no decryption, no KMS)."""
    key = (workspace_id, head.entry_id, head.revision)
    line = None if cache is None else cache.get(key)
    if line is None:
        context = entry_context(workspace_id, head.entry_id, head.revision)
        text = EntryText.parse(unseal(cipher, head.ciphertext, context, head.sha256))
        line = Line(render(text, head.entry_id), text.sources)
        if cache is not None:
            cache.put(key, line)
    return line


RULES_MAX_BYTES = 2000
RULES_HEADING = "### Rules (memory entries of type rule, always recalled; a human changes them)"
JUDGE_BATCH = 20
"""Heads rendered and judged together when a section has no line limit left to size the batch by (the rules)."""

Judge = Callable[[Sequence[EntryRecord], Sequence[Line]], list[CitationState | None]]
"""Judges the citations of some heads' lines: one state per head (None: it cites nothing)."""


def judge_for(
    citations: Citations, workspace_id: str, user_id: str, now: float, binding: KeyBinding | None = None
) -> Judge:
    """One recall's judge: each revision judged once, however many sections ask (the rules, then the index); under
    a bound key session, a cited entry outside its context is as gone as one the user cannot see."""
    known: dict[tuple[str, int], CitationState | None] = {}

    def judge(heads: Sequence[EntryRecord], lines: Sequence[Line]) -> list[CitationState | None]:
        asked = [(h, line) for h, line in zip(heads, lines, strict=True) if (h.entry_id, h.revision) not in known]
        states = citations.judge(workspace_id, user_id, [line.sources for _, line in asked], now, binding)
        for (head, _), head_states in zip(asked, states, strict=True):
            known[head.entry_id, head.revision] = overall(head_states)
        return [known[h.entry_id, h.revision] for h in heads]

    return judge


def rule_line(text: EntryText, entry_id: str) -> str:
    line = _index_line(text, entry_id)
    body = " ".join(text.body.split())
    return f"{line}\n  {body}" if body else line


def build_rules(
    cipher: Cipher, workspace_id: str, heads: Sequence[EntryRecord], judge: Judge, *, cache: IndexLines | None = None
) -> Index:
    """Every visible active rule (title — summary [id], then its body on one line), in entry id order, within
    `RULES_MAX_BYTES` bytes (docs/architecture.md#rules: rules are recalled with the constitution in their own budget).
    When a rule does not fit, it and every later one are left out and a last line says how many; they stay in the
    index. A rule whose cited source is gone is not given (nor in the index)."""
    rules = [head for head in heads if head.type is EntryType.RULE]
    return _within_budget(
        RULES_HEADING,
        rules,
        lambda head: _head_line(cipher, workspace_id, head, cache, rule_line),
        judge,
        max_bytes=RULES_MAX_BYTES - 120,  # room kept for the "left out" line
        more="{} more rules not shown (over the rules budget); the index lists them.",
    )


def build_index(
    table: Table,
    cipher: Cipher,
    workspace_id: str,
    user_id: str,
    *,
    now: float,
    max_lines: int = INDEX_MAX_LINES,
    cache: IndexLines | None = None,
    heads: Sequence[EntryRecord] | None = None,
    skip: frozenset[str] = frozenset(),
    judge: Judge | None = None,
) -> Index:
    """One line per active entry the user may see, in entry id order, within `max_lines` lines and
    `INDEX_MAX_BYTES` bytes; when it is full, a last line says how many were left out. `heads` are the
    visible heads when the caller already read them; `skip` the entries shown elsewhere (the rules block);
    `judge` the recall's judge of citations (a fresh one when none is given). One decryption per line rendered
    (under the warm branch key: no KMS), none for a line cached warm; one consistent read of what a batch of
    lines cites, none when they cite nothing."""
    visible = visible_heads(table, workspace_id, user_id, now) if heads is None else heads
    return _within_budget(
        INDEX_HEADING,
        [head for head in visible if head.entry_id not in skip],
        lambda head: _head_line(cipher, workspace_id, head, cache, _index_line),
        judge if judge is not None else judge_for(Citations(table, cipher), workspace_id, user_id, now),
        max_bytes=INDEX_MAX_BYTES - 100,  # room kept for the "left out" line
        max_lines=max_lines,
        more="{} more not shown; search_memory finds them.",
    )


def _within_budget(
    heading: str,
    heads: Sequence[EntryRecord],
    render: Callable[[EntryRecord], Line],
    judge: Judge,
    *,
    max_bytes: int,
    max_lines: int | None = None,
    more: str,
) -> Index:
    """`heading`, then one rendered line per head in order while they fit in `max_lines` lines and `max_bytes`
    bytes (the heading counted); from the first that does not fit, it and every later head are left out
    unrendered (no decryption, no judgement) and a last line, `more` with the count, says how many. Heads are
    rendered and judged a batch at a time (as many as lines may still be shown): one whose citation is hidden is
    skipped and counted (`hidden`, taking no line), one whose cited text changed is marked (the marker counted
    in the bytes)."""
    lines: list[str] = []
    recalled: list[tuple[str, int]] = []
    left_out = hidden = 0
    used = utf8_size(heading) + 1
    ready: dict[int, tuple[Line, CitationState | None]] = {}
    for position, head in enumerate(heads):
        if left_out or (max_lines is not None and len(lines) >= max_lines):
            left_out += 1
            continue
        if position not in ready:
            count = JUDGE_BATCH if max_lines is None else max(max_lines - len(lines), 1)
            batch = heads[position : position + count]
            rendered = [render(h) for h in batch]
            ready = dict(enumerate(zip(rendered, judge(batch, rendered), strict=True), start=position))
        line, state = ready[position]
        if state is CitationState.HIDDEN:
            hidden += 1
            continue
        text = marked(line.text, head.entry_id, state)
        size = utf8_size(text) + 1
        if used + size > max_bytes:
            left_out += 1
            continue
        used += size
        lines.append(text)
        recalled.append((head.entry_id, head.revision))
    if not lines and not left_out:
        return Index("", (), 0, hidden)
    if left_out:
        lines.append(more.format(left_out))
    return Index("\n".join([heading, *lines]) + "\n", tuple(recalled), left_out, hidden)


@dataclass(frozen=True)
class Budget:
    """What one section of recall spends of its budget, as the Wuu seed's `list` reports its index: the lines and
    bytes it shows, its limits, and how many entries were left out of it (`truncated` when any was)."""

    lines: int
    bytes: int
    max_bytes: int
    max_lines: int | None
    left_out: int

    @property
    def truncated(self) -> bool:
        return self.left_out > 0


@dataclass(frozen=True)
class Sections:
    """The rules block and the index a turn of one member is given, as recall builds them."""

    rules: Index
    index: Index

    @property
    def budgets(self) -> tuple[Budget, Budget]:
        """(rules, index): ids and counts, never text."""
        rules, index = self.rules, self.index
        return (
            Budget(len(rules.recalled), utf8_size(rules.text), RULES_MAX_BYTES, None, rules.left_out),
            Budget(len(index.recalled), utf8_size(index.text), INDEX_MAX_BYTES, INDEX_MAX_LINES, index.left_out),
        )


def recall_sections(
    table: Table,
    cipher: Cipher,
    workspace_id: str,
    user_id: str,
    *,
    now: float,
    rule_lines: IndexLines | None = None,
    index_lines: IndexLines | None = None,
    within: Callable[[EntryRecord], bool] | None = None,
    citations: Citations | None = None,
    binding: KeyBinding | None = None,
) -> Sections:
    """The rules `user_id` may see, then the index of the other entries: the one place both are built, for recall
    and for the entry list's report of their budgets. `within`: the heads a key session's binding admits
    (entries/bound.py), judged before any line is rendered, so what is outside takes no room in either budget.
    Citations are judged once per revision for both."""
    heads = visible_heads(table, workspace_id, user_id, now)
    if within is not None:
        heads = [head for head in heads if within(head)]
    judge = judge_for(citations or Citations(table, cipher), workspace_id, user_id, now, binding)
    rules = build_rules(cipher, workspace_id, heads, judge, cache=rule_lines)
    shown = frozenset(entry_id for entry_id, _ in rules.recalled)
    index = build_index(
        table, cipher, workspace_id, user_id, now=now, cache=index_lines, heads=heads, skip=shown, judge=judge
    )
    return Sections(rules, index)
