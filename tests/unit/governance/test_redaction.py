"""Redaction before storage (docs/architecture.md#redaction): each detector's findings and near misses, and the
properties - a generated secret of any kind never survives, redaction is idempotent, text without findings is
unchanged."""

from __future__ import annotations

import base64
import json

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from stdnum import iban, luhn

from tests.depth import examples
from workspace_memory.api.errors import status_for
from workspace_memory.governance.redaction import (
    MARKER,
    Finding,
    PersonalDataInKey,
    findings,
    is_card_number,
    merge_findings,
    redact,
    refuse_personal_data_in_key,
)
from workspace_memory.kernel.terms import RedactionKind as Kind

pytestmark = pytest.mark.unit


def kinds(text: str) -> dict[str, int]:
    return {f.kind.value: f.count for f in findings(text)}


# -- one detector at a time: true positives -----------------------------------------------------------------

FOUND = [
    ("write to alice.smith+memo@example.co.uk today", "write to [redacted:email] today", "email"),
    ("call +1 415-555-0100 now", "call [redacted:phone] now", "phone"),
    ("ring +44 20 7946 0958.", "ring [redacted:phone].", "phone"),
    ("office (415) 555-0100", "office [redacted:phone]", "phone"),
    ("card 4111 1111 1111 1111 expires", "card [redacted:card] expires", "card"),
    ("amex 3782-822463-10005", "amex [redacted:card]", "card"),
    ("pay DE89 3704 0044 0532 0130 00 THANKS", "pay [redacted:iban] THANKS", "iban"),
    ("to GB82WEST12345698765432.", "to [redacted:iban].", "iban"),
    ("id AKIAIOSFODNN7EXAMPLE here", "id [redacted:cloud_key] here", "cloud_key"),
    ("gh ghp_" + "a1B2" * 9 + " end", "gh [redacted:api_token] end", "api_token"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "Authorization: Bearer [redacted:bearer_token]", None),
    ("db password=hunter2 for staging", "db password=[redacted:secret] for staging", "secret"),
    ('api_key = "two words"', 'api_key = "[redacted:secret]"', "secret"),
    ("https://deploy:s3cr3tpw@git.example.com/x", "https://deploy:[redacted:secret]/x", "secret"),
]


@pytest.mark.parametrize(("text", "expected", "kind"), FOUND)
def test_each_detector_redacts_what_it_finds(text: str, expected: str, kind: str | None) -> None:
    redacted = redact(text)
    assert redacted.text == expected
    if kind is not None:
        assert kind in {f.kind.value for f in redacted.findings}


def test_a_jwt_is_redacted_with_its_signature() -> None:
    token = _jwt(b"sig-bytes-0123456789")
    redacted = redact(f"token {token}.")
    assert redacted.text == "token [redacted:jwt]."
    assert redacted.findings == (Finding(Kind.JWT, 1),)


def test_a_bearer_jwt_is_one_finding_named_by_the_more_specific_kind() -> None:
    redacted = redact(f"Authorization: Bearer {_jwt(b'x' * 20)}")
    assert redacted.text == "Authorization: Bearer [redacted:jwt]"
    assert redacted.findings == (Finding(Kind.JWT, 1),)


def test_a_private_key_block_is_redacted_whole_and_what_follows_kept() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx\nYWJjZGVm==\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{block}\nrotate it monthly").text == "key:\n[redacted:private_key]\nrotate it monthly"


def test_a_private_key_block_without_its_end_line_is_redacted_over_its_body() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmUAAAAEbm9uZQ\n\nnext paragraph"
    assert redact(text).text == "[redacted:private_key]\n\nnext paragraph"


def test_counts_are_per_kind_in_the_kinds_order() -> None:
    text = "+1 415-555-0100, bob@example.com, eve@example.org, 4111111111111111"
    assert redact(text).findings == (Finding(Kind.CARD, 1), Finding(Kind.EMAIL, 2), Finding(Kind.PHONE, 1))


# -- near misses: left as they are ---------------------------------------------------------------------------

NEAR_MISSES = [
    "release 1.2.3 and v10.4.12, build 20240506",
    "on 2024-05-06 at 12:30, and 06/05/2024",
    "order 123456789 and ticket 4155550100",  # bare digit runs are ids, not national phone numbers
    "card-like 4111 1111 1111 1112",  # 16 digits failing the Luhn check
    "id 1234567890123452",  # passes Luhn, but no issuer range starts with 1
    "IBAN-like DE89 3704 0044 0532 0130 01",  # wrong check digits
    "GB82WEST1234569876543",  # one character short
    "price 1,234,567.89 and pi 3.14159265358979",
    "Bearer of bad news",
    "api_key = ${API_KEY} and password = get_password()",
    "see RFC 7231 and ISO 8601; port 8080; sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "user@localhost is not an address with a domain",
    "a [redacted:email] marker stays a marker, and password=[redacted:secret] too",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_redacted(text: str) -> None:
    assert findings(text) == ()
    assert redact(text).text == text


def test_card_numbers_need_an_issuer_range_a_length_and_the_luhn_digit() -> None:
    assert is_card_number("4111111111111111")
    assert not is_card_number("4111111111111112")  # Luhn
    assert not is_card_number("411111111111113")  # Visa is never 15 digits long
    assert not is_card_number("9111111111111119")


def test_merge_adds_counts_in_the_kinds_order() -> None:
    merged = merge_findings([(Finding(Kind.PHONE, 1),), (Finding(Kind.EMAIL, 2), Finding(Kind.PHONE, 3))])
    assert merged == (Finding(Kind.EMAIL, 2), Finding(Kind.PHONE, 4))


# -- keys ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["contacts/alice@example.com", "people/+14155550100", "billing/4111111111111111"])
def test_a_key_holding_personal_data_is_refused_without_quoting_it(key: str) -> None:
    with pytest.raises(PersonalDataInKey) as caught:
        refuse_personal_data_in_key(key)
    assert caught.value.code == "PERSONAL_DATA_IN_KEY"
    assert status_for(caught.value) == 400
    assert key not in caught.value.message
    assert key.split("/")[1] not in caught.value.message


@pytest.mark.parametrize("key", ["project/deadline", "team/on-call-rotation", "release/v1.2.3"])
def test_an_ordinary_key_passes(key: str) -> None:
    refuse_personal_data_in_key(key)


# -- properties ----------------------------------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(signature: bytes, subject: str = "1234567890") -> str:
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64(json.dumps({"sub": subject}).encode())
    return f"{header}.{payload}.{_b64(signature)}"


ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _group(digits: str, sep: str) -> str:
    return sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))


@st.composite
def cards(draw: st.DrawFn) -> str:
    prefix, length = draw(st.sampled_from([("4", 16), ("51", 16), ("2221", 16), ("37", 15), ("6011", 16), ("62", 19)]))
    body = prefix + draw(st.text("0123456789", min_size=length - len(prefix) - 1, max_size=length - len(prefix) - 1))
    number = body + luhn.calc_check_digit(body)
    return _group(number, draw(st.sampled_from(["", " ", "-"])))


@st.composite
def ibans(draw: st.DrawFn) -> str:
    country, bban = draw(
        st.sampled_from(
            [
                ("DE", st.text("0123456789", min_size=18, max_size=18)),
                ("NL", st.builds(lambda b, a: "ABNA" + a, st.none(), st.text("0123456789", min_size=10, max_size=10))),
                ("FR", st.just("20041010050500013M02606")),
            ]
        )
    )
    account = draw(bban)
    number = country + iban.calc_check_digits(country + "00" + account) + account
    return _group(number, draw(st.sampled_from(["", " "])))


@st.composite
def phones(draw: st.DrawFn) -> str:
    region = draw(st.sampled_from(["US", "GB", "DE", "FR", "IN", "BR", "JP", "AU"]))
    example = phonenumbers.example_number(region)
    assert example is not None
    return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def _text(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high)


SECRETS: dict[Kind, st.SearchStrategy[tuple[str, str]]] = {
    # (what is written, the secret part that must not survive)
    Kind.EMAIL: st.builds(
        lambda local, domain, tld: (f"{local}@{domain}.{tld}",) * 2,
        st.from_regex(r"[a-z0-9][a-z0-9._+-]{0,15}[a-z0-9]", fullmatch=True),
        st.from_regex(r"[a-z0-9]{2,12}", fullmatch=True),
        st.sampled_from(["com", "org", "io", "co", "example"]),
    ),
    Kind.PHONE: phones().map(lambda p: (p, p)),
    Kind.CARD: cards().map(lambda c: (c, c)),
    Kind.IBAN: ibans().map(lambda i: (i, i)),
    Kind.CLOUD_KEY: _text(UPPER_DIGITS, 16, 16).map(lambda s: (f"AKIA{s}",) * 2),
    Kind.API_TOKEN: _text(ALNUM, 36, 36).map(lambda s: (f"ghp_{s}",) * 2),
    Kind.PRIVATE_KEY: st.lists(_text(ALNUM + "+/", 16, 64), min_size=1, max_size=4).map(
        lambda lines: (
            "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----",
            "\n".join(lines),
        )
    ),
    Kind.JWT: st.tuples(st.binary(min_size=16, max_size=48), _text(ALNUM, 1, 12)).map(
        lambda t: (_jwt(t[0], t[1]),) * 2
    ),
    Kind.BEARER_TOKEN: _text(ALNUM + "-._~+/", 20, 60).map(lambda s: (f"Authorization: Bearer {s}", s)),
    Kind.SECRET: st.tuples(st.sampled_from(["password", "db_pass", "secret", "api_key"]), _text(ALNUM, 10, 24)).map(
        lambda t: (f"{t[0]}={t[1]}", t[1])
    ),
}

SURROUNDING = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    max_size=40,
)
SEPARATORS = st.sampled_from([" ", "\n", " - ", ": ", " (", ") "])


@st.composite
def texts_with_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Random text with 1-3 generated secrets of any kinds in it, each set off by a separator."""
    parts = [draw(SURROUNDING)]
    secrets = []
    for kind in draw(st.lists(st.sampled_from(list(Kind)), min_size=1, max_size=3)):
        written, secret = draw(SECRETS[kind])
        parts += [draw(SEPARATORS), written, draw(SEPARATORS), draw(SURROUNDING)]
        secrets.append(secret)
    return "".join(parts), secrets


PROPERTY = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(case=texts_with_secrets())
def test_a_generated_secret_never_survives_redaction(case: tuple[str, list[str]]) -> None:
    text, secrets = case
    for secret in secrets:  # the random text around it must not happen to hold a copy of it
        assume(text.count(secret) == secrets.count(secret))
    redacted = redact(text)
    for secret in secrets:
        assert secret not in redacted.text
    assert redacted.findings
    assert sum(f.count for f in redacted.findings) == len(MARKER.findall(redacted.text)) - len(MARKER.findall(text))


@PROPERTY
@given(text=st.one_of(texts_with_secrets().map(lambda case: case[0]), SURROUNDING, st.text(max_size=200)))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.findings == ()


PROSE = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz ABCXYZ,.;!?()\n#-*_é漢"), max_size=300)


@PROPERTY
@given(text=st.one_of(PROSE, st.text(max_size=200)))
def test_text_without_findings_is_unchanged_byte_for_byte(text: str) -> None:
    if findings(text) == ():
        assert redact(text).text == text


@PROPERTY
@given(text=PROSE)
def test_prose_without_digits_or_at_signs_has_no_findings(text: str) -> None:
    assert findings(text) == ()
    assert redact(text).text == text
