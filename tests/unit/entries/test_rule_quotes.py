"""A rule's quote compared as words (decision 0053)."""

from __future__ import annotations

import pytest

from workspace_memory.entries.model import EntryText
from workspace_memory.entries.rule_quotes import check_quote, sentences, words
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
SAID = "from now on always answer in british english please"
RULE = EntryText("British English", "From now on, always answer in British English, please.", "")


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
        ("ways answer in British English", RULE, QuoteNotInMessage),
        ("from now on always answer in American English please", RULE, QuoteNotInMessage),
        ("always answer in british english", RULE, QuoteNotInMessage),  # part of a sentence
        ("from now on always answer", RULE, QuoteNotInMessage),  # its start
        (SAID, EntryText("British English", "always answer in British English", ""), RuleNotInQuote),  # a part
        (SAID, EntryText("Tone", RULE.summary, ""), RuleNotInQuote),
        (SAID, EntryText("British English", RULE.summary, "and in French"), RuleNotInQuote),
        (SAID, EntryText("British English", RULE.summary, "always answer in British English"), RuleNotInQuote),
        ("full width too", EntryText("full width", "Full width too", ""), None),
        (SAID, RULE, None),
        (SAID, EntryText("English", RULE.summary, "  \n"), None),
        (SAID, EntryText("English", RULE.summary, RULE.summary.upper()), None),
        (f"{SAID}. Full width too", EntryText("English", f"{SAID} full width too", ""), None),  # two sentences
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


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Do not reply in French. Thanks!", (("do", "not", "reply", "in", "french"), ("thanks",))),
        ("Use v2.1 at 10:30, e.g.tabs", (("use", "v2", "1", "at", "10", "30", "e", "g", "tabs"),)),
        ("Note: never deploy\non Fridays | ok", (("note",), ("never", "deploy"), ("on", "fridays"), ("ok",))),
        ("不要用法语回答。谢谢", (("不要用法语回答",), ("谢谢",))),
        ("Never\uff0e Deploy\uff1f", (("never",), ("deploy",))),  # full-width stops, NFKC'd
    ],
)
def test_sentences_end_at_stops_followed_by_space_and_at_line_breaks(
    message: str, expected: tuple[tuple[str, ...], ...]
) -> None:
    assert sentences(message) == expected


@pytest.mark.parametrize("quote", ["reply in French", "not reply in French", "do not reply in French"])
def test_a_quote_cannot_start_after_the_users_not(quote: str) -> None:
    """The gap decision 0071 closes: each of these is a run of the user's words and says the opposite."""
    with pytest.raises(QuoteNotInMessage):
        check_quote(quote, "Please do not reply in French.", EntryText("French", quote, ""))


def test_a_summary_cannot_leave_out_the_quotes_not() -> None:
    with pytest.raises(RuleNotInQuote):
        check_quote(
            "Please do not reply in French",
            "Please do not reply in French.",
            EntryText("French", "reply in French", ""),
        )
