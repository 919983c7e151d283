"""A rule's quote compared as words (decision 0053)."""

from __future__ import annotations

import pytest

from workspace_memory.entries.model import EntryText
from workspace_memory.entries.rule_quotes import check_quote, words
from workspace_memory.kernel.errors import (
    DomainError,
    InvalidInput,
    QuoteNotInMessage,
    QuoteRequired,
    QuoteTooShort,
    RuleNotInQuote,
)

FULL_WIDTH = "\uff26\uff55\uff4c\uff4c \uff57\uff49\uff44\uff54\uff48"  # "Full width", NFKC folds it
MESSAGE = f"From now on, ALWAYS answer in British-English — please! {FULL_WIDTH} too."
RULE = EntryText("British English", "Always answer in British English.", "")


def test_words_fold_case_width_and_punctuation() -> None:
    assert words("ALWAYS answer, in British-English!") == ("always", "answer", "in", "british", "english")
    assert words(FULL_WIDTH) == ("full", "width")
    assert words("Straße") == ("strasse",)


@pytest.mark.parametrize(
    ("quote", "text", "error"),
    [
        (None, RULE, QuoteRequired),
        ("   ", RULE, QuoteRequired),
        ("x" * 501, RULE, InvalidInput),
        ("e", RULE, QuoteTooShort),
        ("in British", RULE, QuoteTooShort),
        ("now on, ALWAYS", EntryText("now on", "now on always", ""), None),
        ("ways answer in British English", RULE, QuoteNotInMessage),
        ("always answer in American English", RULE, QuoteNotInMessage),
        ("answer in British English", RULE, RuleNotInQuote),  # the summary says "always": more than the quote
        ("always answer in british english", EntryText("Tone", RULE.summary, ""), RuleNotInQuote),
        (
            "always answer in british english",
            EntryText("British English", RULE.summary, "and in French"),
            RuleNotInQuote,
        ),
        ("full width too", EntryText("full width", "Full width too", ""), None),
        ("always answer in british english", RULE, None),
        ("always answer in british english", EntryText("English", "answer in British", "  \n"), None),
    ],
)
def test_check_quote(quote: str | None, text: EntryText, error: type[DomainError] | None) -> None:
    if error is None:
        check_quote(quote, MESSAGE, text)
    else:
        with pytest.raises(error) as raised:
            check_quote(quote, MESSAGE, text)
        assert "british" not in str(raised.value).lower()  # no error echoes the text


def test_no_message_is_no_quote() -> None:
    with pytest.raises(QuoteNotInMessage):
        check_quote("always answer in British English", None, RULE)
