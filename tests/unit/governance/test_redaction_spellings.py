"""Redaction reads one spelling of a text and redacts the original characters (issue 17, finding 4): full-width
forms, format characters, odd spaces and dashes are folded before detection, and only the characters behind
a finding are replaced. And an agent's text that is nothing but secrets is refused (finding 11)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.unit.governance.test_redaction import PROPERTY, SECRETS, SURROUNDING
from workspace_memory.api.errors import status_for
from workspace_memory.governance.redaction import RedactedToNothing, redact, redact_written
from workspace_memory.governance.redaction.normal import normalise
from workspace_memory.governance.redaction.passwords import PROSE_STEMS, _mentions
from workspace_memory.kernel.terms import RedactionKind as Kind

pytestmark = pytest.mark.unit


# -- one spelling for detection, the original characters redacted (issue 17, finding 4) ---------------------


def wide(ascii: str) -> str:
    """The full-width spelling of printable ASCII (U+FF01 to U+FF5E), which NFKC folds back."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in ascii)


def test_ascii_is_its_own_normal_form() -> None:
    normal = normalise("plain ASCII, 4111 1111 1111 1111")
    assert normal.text == "plain ASCII, 4111 1111 1111 1111"
    assert normal.original(6, 11) == (6, 11)


def test_normalising_folds_spellings_and_maps_back_to_the_original_characters() -> None:
    text = wide("bob@example.com") + "\u200b\u00a0e\u0301\u3000\ufb01 415\u2013555"
    normal = normalise(text)
    assert normal.text == "bob@example.com é fi 415-555"
    assert normal.original(0, 15) == (0, 15)  # full-width: one character each
    assert normal.original(16, 17) == (17, 19)  # é composed from e and its combining accent
    assert normal.original(18, 19) == (20, 21)  # the f of the ligature: the whole ligature
    assert normal.original(15, 16) == (16, 17)  # the no-break space; the zero-width space before it is gone


def test_only_the_original_characters_of_a_finding_are_replaced() -> None:
    text = "pay\u00a0with 4111\u00a01111\u00a01111\u00a01111\u200b. thanks\u2009!"
    assert redact(text).text == "pay\u00a0with [redacted:card]\u200b. thanks\u2009!"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("mail " + wide("alice@example.com"), "email"),
        ("mail al\u200bice@exam\u00adple.com", "email"),
        ("mail al\u034fice@example\u3002com", "email"),
        ("key AKIA\ufe0fIOSFODNN7\ufe00EXAMPLE", "cloud_key"),
        ("key AKIA\u2060IOSFODNN7\u200dEXAMPLE", "cloud_key"),
        ("iban de89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "iban"),
        ("card " + wide("4111 1111 1111 1111"), "card"),
        ("call +44\u202f20\u202f7946\u202f0958", "phone"),
        ("the pass\u200bword is Tr0ub4dor&3", "secret"),
    ],
)
def test_a_new_spelling_of_an_old_secret_is_still_found(text: str, kind: str) -> None:
    redacted = redact(text)
    assert kind in {f.kind.value for f in redacted.findings}
    assert redacted.text.endswith(f"[redacted:{kind}]")


PROSE_WORDS = [
    "password", "passwd", "passphrase", "pwd", "pw", "recovery code", "mot de passe", "contraseña", "passwort",
    "kennwort", "wachtwoord", "senha", "lösenord", "salasana", "hasło", "parola", "пароль", "db password",
]  # fmt: skip


@pytest.mark.parametrize("word", PROSE_WORDS)
def test_every_word_for_a_password_is_read_in_prose(word: str) -> None:
    """The fast path (a line without any of `PROSE_STEMS` is skipped) never skips a word the pattern knows."""
    assert _mentions(word, PROSE_STEMS)
    assert redact(f"the {word} is Xy9!kQ2m").text == f"the {word} is [redacted:secret]"


@pytest.mark.parametrize("word", ["credentials", "creds", "login", "user/pass"])
def test_a_user_and_password_pair_loses_the_password(word: str) -> None:
    assert _mentions(word, PROSE_STEMS)
    assert redact(f"{word}: admin / Xy9!kQ2m").text == f"{word}: admin / [redacted:secret]"


@pytest.mark.parametrize(
    "text",
    [
        "the password is required",
        "the password must be rotated",
        "token expires in 3600 seconds",
        "the secret is out",
        "password_min_length = 12",
        "secret_arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:db'",
        "pin the dependency to 1.2.3",
    ],
)
def test_words_about_secrets_that_name_none_are_left_alone(text: str) -> None:
    assert redact(text).text == text


# -- an agent's text that is nothing but secrets -------------------------------------------------------------


@pytest.mark.parametrize("text", ["AKIAIOSFODNN7EXAMPLE", "- bob@example.com", "  +44 20 7946 0958, 4111111111111111."])
def test_text_that_redacts_to_nothing_is_refused_naming_only_the_kinds(text: str) -> None:
    with pytest.raises(RedactedToNothing) as caught:
        redact_written(text)
    assert caught.value.code == "REDACTED_TO_NOTHING"
    assert status_for(caught.value) == 400
    assert "found:" in caught.value.message
    assert text.strip(" -,.") not in caught.value.message


@pytest.mark.parametrize("text", ["", "deploys on Fridays", "- deploy key AKIAIOSFODNN7EXAMPLE", "[redacted:email]"])
def test_text_with_something_left_or_nothing_found_is_written(text: str) -> None:
    assert redact_written(text) == redact(text)


FORMAT_CHARACTERS = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u202a\u202c\u2066\u2069"
ODD_SPACES = "\u00a0\u2009\u202f\u3000\u2002"


@st.composite
def respelled(draw: st.DrawFn, text: str) -> str:
    """`text` as someone hiding it would write it: full-width characters, format characters inside, odd
    spaces - each character's spelling drawn on its own."""
    out = []
    for char in text:
        style = draw(st.sampled_from(["plain", "plain", "wide", "format"]))
        if char == " ":
            out.append(draw(st.sampled_from(ODD_SPACES)))
        elif style == "wide":
            out.append(wide(char))
        elif style == "format" and out:
            out.append(draw(st.sampled_from(FORMAT_CHARACTERS)) + char)
        else:
            out.append(char)
    return "".join(out)


@st.composite
def respelled_secrets(draw: st.DrawFn) -> tuple[str, str]:
    written, secret = draw(SECRETS[draw(st.sampled_from(list(Kind)))])
    spelled = draw(respelled(secret))
    return written.replace(secret, spelled), spelled


@PROPERTY
@given(case=respelled_secrets(), before=SURROUNDING, after=SURROUNDING)
def test_a_respelled_secret_never_survives_redaction(case: tuple[str, str], before: str, after: str) -> None:
    written, secret = case
    text = f"{before} {written} {after}"
    assume(text.count(secret) == 1)
    redacted = redact(text)
    assert secret not in redacted.text
    assert redacted.findings


def test_what_a_finding_uncovers_is_found_in_the_same_redaction() -> None:
    """The password's digits run on into the phone number after it, so one pass sees no phone; redacting the
    password uncovers it, and the redaction reads its line again: redacting the result changes nothing."""
    once = redact("password=83749201 (02) 9876 5432")
    assert once.text == "password=[redacted:secret] [redacted:phone]"
    assert redact(once.text).text == once.text
