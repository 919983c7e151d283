"""A rule's quote (docs/architecture.md#rules, decision 0053): an agent installs or changes a rule only with
the words of the person who states it, and the rule says nothing beyond them.

Both sides are compared as words: NFKC, case folded (and NFKC again), every character that is not a letter,
a mark or a digit a separator, white space collapsed. The quote must be one or more whole sentences of the
turn's user message (the copy sealed on the admission, never a document, a tool result or an assistant
message), at least `MIN_QUOTE_WORDS` words and `MIN_QUOTE_CHARS` characters; the rule's summary, and its body
unless blank, must each be the whole quote, and its title a run of whole words of it. A quote that may start
or stop mid-sentence could leave out a "not" (decision 0071); whole sentences, stated whole, cannot. No error
names or echoes any of the text.
"""

from __future__ import annotations

import re
import unicodedata

from workspace_memory.entries.model import EntryText
from workspace_memory.kernel.errors import (
    InvalidInput,
    QuoteNotInMessage,
    QuoteRequired,
    QuoteTooShort,
    RuleNotInQuote,
)

MAX_QUOTE_BYTES = 500
MIN_QUOTE_WORDS = 3
MIN_QUOTE_CHARS = 12
"""Counted on the normalised quote (its words joined by single spaces): `e` or `yes do it` states no rule."""

_WORD_CATEGORIES = frozenset("LMN")
_SENTENCE_END = re.compile(
    r"[.!?;:\u2026\u203c\u2047-\u2049](?=\s|$)"  # a stop before white space or the end
    r"|[\n\r|\u2028\u2029\u3002\uff01\uff1f\uff1b\u061f\u0964]"  # a line break, `|`, a CJK, Arabic or Devanagari stop
)
"""Where a sentence of the message ends: `.`, `!`, `?`, `;`, `:` or `…` before white space or the end (so `v2.1`
and `10:30` stay whole), and line breaks, `|` and the CJK, Arabic and Devanagari stops anywhere. A boundary
this misses only makes the check stricter: a quote must then take in more of the message."""


def words(text: str) -> tuple[str, ...]:
    """`text` as the comparison sees it: NFKC case-folded words, punctuation and white space as separators."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(ch if unicodedata.category(ch)[0] in _WORD_CATEGORIES else " " for ch in folded)
    return tuple(spaced.split())


def is_run(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """`part` (non-empty) occurs in `whole` as consecutive whole words."""
    size = len(part)
    return size > 0 and any(whole[i : i + size] == part for i in range(len(whole) - size + 1))


def sentences(message: str) -> tuple[tuple[str, ...], ...]:
    """The message's sentences as words (`words`), empty ones left out; cut after NFKC, so a full-width stop
    ends a sentence as its ASCII twin does."""
    parts = _SENTENCE_END.split(unicodedata.normalize("NFKC", message))
    return tuple(found for found in (words(part) for part in parts) if found)


def is_sentences(quoted: tuple[str, ...], message: str) -> bool:
    """`quoted` is one or more consecutive whole sentences of `message`, compared as words."""
    spans = sentences(message)
    for start in range(len(spans)):
        joined: tuple[str, ...] = ()
        for span in spans[start:]:
            joined += span
            if joined == quoted:
                return True
            if len(joined) >= len(quoted) or quoted[: len(joined)] != joined:
                break
    return False


def check_quote(quote: str | None, message: str | None, text: EntryText) -> None:
    """Refuses, in this order: no quote (`QUOTE_REQUIRED`), one over `MAX_QUOTE_BYTES`, one shorter than the
    minimum (`QUOTE_TOO_SHORT`), one that is not whole sentences of the user's message
    (`QUOTE_NOT_IN_MESSAGE`), and a rule whose summary or body is not the whole quote, or whose title is not
    words of it (`RULE_NOT_IN_QUOTE`)."""
    if quote is None or not quote.strip():
        raise QuoteRequired("an agent's rule needs a quote of the user's message in this turn")
    if len(quote.encode("utf-8")) > MAX_QUOTE_BYTES:
        raise InvalidInput(f"quote must be at most {MAX_QUOTE_BYTES} bytes")
    quoted = words(quote)
    if len(quoted) < MIN_QUOTE_WORDS or len(" ".join(quoted)) < MIN_QUOTE_CHARS:
        raise QuoteTooShort(f"a rule's quote needs at least {MIN_QUOTE_WORDS} words and {MIN_QUOTE_CHARS} characters")
    if message is None or not is_sentences(quoted, message):
        raise QuoteNotInMessage("the quote is not whole sentences of the user's own words in this turn's message")
    stated = [text.summary] + ([text.body] if text.body.strip() else [])
    if not is_run(words(text.title), quoted) or any(words(part) != quoted for part in stated):
        raise RuleNotInQuote("a rule's summary and body must each be its whole quote, and its title words of it")
