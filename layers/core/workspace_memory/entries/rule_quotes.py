"""A rule's quote (docs/architecture.md#rules, decision 0053): an agent installs or changes a rule only with
the words of the person who states it, and the rule says nothing beyond them.

Both sides are compared as words: NFKC, case folded (and NFKC again), every character that is not a letter,
a mark or a digit a separator, white space collapsed. The quote must be a run of whole words of the turn's
user message (the copy sealed on the admission, never a document, a tool result or an assistant message), at
least `MIN_QUOTE_WORDS` words and `MIN_QUOTE_CHARS` characters; the rule's title and summary, and its body
unless blank, must each be a run of whole words of the quote. No error names or echoes any of the text.
"""

from __future__ import annotations

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


def words(text: str) -> tuple[str, ...]:
    """`text` as the comparison sees it: NFKC case-folded words, punctuation and white space as separators."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(ch if unicodedata.category(ch)[0] in _WORD_CATEGORIES else " " for ch in folded)
    return tuple(spaced.split())


def is_run(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    """`part` (non-empty) occurs in `whole` as consecutive whole words."""
    size = len(part)
    return size > 0 and any(whole[i : i + size] == part for i in range(len(whole) - size + 1))


def check_quote(quote: str | None, message: str | None, text: EntryText) -> None:
    """Refuses, in this order: no quote (`QUOTE_REQUIRED`), one over `MAX_QUOTE_BYTES`, one shorter than the
    minimum (`QUOTE_TOO_SHORT`), one that is not whole words of the user's message (`QUOTE_NOT_IN_MESSAGE`),
    and a rule whose title, summary or body is not whole words of the quote (`RULE_NOT_IN_QUOTE`)."""
    if quote is None or not quote.strip():
        raise QuoteRequired("an agent's rule needs a quote of the user's message in this turn")
    if len(quote.encode("utf-8")) > MAX_QUOTE_BYTES:
        raise InvalidInput(f"quote must be at most {MAX_QUOTE_BYTES} bytes")
    quoted = words(quote)
    if len(quoted) < MIN_QUOTE_WORDS or len(" ".join(quoted)) < MIN_QUOTE_CHARS:
        raise QuoteTooShort(f"a rule's quote needs at least {MIN_QUOTE_WORDS} words and {MIN_QUOTE_CHARS} characters")
    if message is None or not is_run(quoted, words(message)):
        raise QuoteNotInMessage("the quote is not the user's own words in this turn's message")
    parts = [text.title, text.summary] + ([text.body] if text.body.strip() else [])
    if not all(is_run(words(part), quoted) for part in parts):
        raise RuleNotInQuote("a rule's title, summary and body must each be words of its quote")
