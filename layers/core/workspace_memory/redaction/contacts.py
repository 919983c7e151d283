"""E-mail addresses and phone numbers.

E-mail is a local pattern (no maintained finder of addresses in prose exists; `email-validator` validates a
given string): WHATWG's valid address widened to Unicode local parts and internationalised domains (labels of
any script, `xn--` labels), a dotted domain ending in a TLD; and the spelled-out forms people use to dodge
scrapers, `name [at] example [dot] com` or `name at example dot com`. A full-width at sign and zero-width
characters inside an address are the normaliser's business, not this pattern's.

Phone numbers are Google's `phonenumbers`: international numbers (`+…`) valid in their country, any country;
national formats of `NATIONAL_REGIONS`, each only as that region groups its numbers (the matcher's
`EXACT_GROUPING`) and written with a separator.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from workspace_memory.redaction.credentials import Spans
from workspace_memory.redaction.normal import NormalText

_ATEXT = r"[\w.!#$%&'*+/=?^`{|}~-]"
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_TLD = r"(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{2,59})"
_EMAIL = re.compile(rf"(?<!{_ATEXT}){_ATEXT}+@(?:{_LABEL}\.)+{_TLD}(?!\w|:[A-Za-z_~/.-])")
"""Not an scp-style remote (`git@github.com:acme/api.git`): a host and a path, not a mailbox (a port after
the host, as in a URL's `pass@host:5432`, still ends an address)."""

_OPEN, _CLOSE = r"[(\[{<]", r"[)\]}>]"
_SPELLED_AT = rf"\s*{_OPEN}\s*at\s*{_CLOSE}\s*"
_SPELLED_DOT = rf"\s*{_OPEN}\s*dot\s*{_CLOSE}\s*|\s+dot\s+"
_OBFUSCATED = re.compile(
    rf"(?i)(?<![\w.+-])[\w.+-]+(?:{_SPELLED_DOT}[\w+-]+)*(?P<at>{_SPELLED_AT}|\s+at\s+)"
    rf"[^\W_][\w-]*(?:(?:{_SPELLED_DOT}|\.)[^\W_][\w-]*)+(?!\w)"
)
_DOTS = re.compile(rf"(?i){_SPELLED_DOT}|\.")
_WORD_DOT = re.compile(rf"(?i){_SPELLED_DOT}")
COMMON_TLDS = frozenset(
    {
        "com",
        "net",
        "org",
        "edu",
        "gov",
        "mil",
        "int",
        "io",
        "co",
        "ai",
        "app",
        "dev",
        "info",
        "biz",
        "me",
        "tech",
        "xyz",
        "online",
        "site",
        "email",
        "cloud",
        "page",
        "us",
        "uk",
        "de",
        "fr",
        "es",
        "it",
        "nl",
        "be",
        "ch",
        "at",
        "se",
        "no",
        "dk",
        "fi",
        "pl",
        "cz",
        "pt",
        "ie",
        "au",
        "nz",
        "ca",
        "in",
        "jp",
        "cn",
        "kr",
        "br",
        "mx",
        "ar",
        "ru",
        "eu",
        "sg",
        "hk",
        "za",
    }
)
"""TLDs an address spelled `name at example dot com` may end in: plain words around `at` and `dot` are prose
far more often than an address, unless they end in a TLD everyone knows."""


def emails(text: NormalText) -> Spans:
    yield from (match.span() for match in _EMAIL.finditer(text))
    for match in _OBFUSCATED.finditer(text):
        tld = _DOTS.split(match.group())[-1].lower()
        if match.group("at").strip().startswith(("(", "[", "{", "<")):
            if tld.isalpha() and len(tld) >= 2:
                yield match.span()
        elif tld in COMMON_TLDS and _WORD_DOT.search(match.group()):
            yield match.span()


_PLUS = re.compile(r"\+(?=[\d(])")
_LONGEST_PHONE = 32
"""Characters after a `+` that can still be part of one number (15 digits, their grouping, an extension)."""

NATIONAL_REGIONS = (
    # North America, Europe, Asia-Pacific, Latin America, Middle East and Africa: where most teams' contacts
    # are. Not Luxembourg: four-digit numbers are valid there, so every year would be a phone number.
    *("US", "CA", "MX", "BR", "AR", "GB", "IE", "DE", "AT", "CH", "FR", "BE", "NL", "ES", "PT", "IT"),
    *("SE", "NO", "DK", "FI", "PL", "CZ", "IN", "JP", "KR", "CN", "HK", "TW", "SG", "AU", "NZ", "IL"),
    *("TR", "AE", "ZA"),
)
"""Regions whose national formats are found, each only as it groups its numbers: a bare run of digits in a
national format is an order number or an id as often as a phone number, and no one region is every team's."""

_NATIONAL = re.compile(r"(?<![\w+.,:/-])\(?\d[\d ().\-/]{5,24}\d(?![\w:]|[.,]\d)")
_MIN_NATIONAL_DIGITS = 8
_SEPARATOR = re.compile(r"[ ().\-/]")
_NOT_A_PHONE = re.compile(r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4}|\d{1,3}(?:\.\d{1,3}){3}")
"""Dates (2024-05-06, 06/05/2024) and IPv4 addresses, whatever some region's numbering plan allows."""


@cache
def _phonenumbers() -> Any:
    import phonenumbers

    return phonenumbers


def phones(text: NormalText) -> Spans:
    """International numbers (`+44 20 7946 0958`) valid in their country; grouped national numbers of
    `NATIONAL_REGIONS`. Dates, times, versions and bare digit runs are not phone numbers here."""
    yield from _international(text)
    yield from _national(text)


def _international(text: NormalText) -> Spans:
    phonenumbers = _phonenumbers()
    for plus in _PLUS.finditer(text):
        # From each `+` on, the longest run of words that is a valid number: the matcher's candidate would take
        # in what stands before (`+ +44 …`) or after (`+44 121 234 5678 00000`) and fail to parse.
        segment = text[plus.start() : plus.start() + _LONGEST_PHONE].split("\n", 1)[0]
        ends = [m.start() for m in re.finditer(r"\s", segment)] + [len(segment)]
        for end in reversed(ends):
            candidate = segment[:end].rstrip(" .,;:-/")
            try:
                number = phonenumbers.parse(candidate, None)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                yield plus.start(), plus.start() + len(candidate)
                break


@cache
def _plans() -> tuple[tuple[str, str, re.Pattern[str], frozenset[int]], ...]:
    """Per region: its national prefix, the pattern any of its numbers fits and their possible lengths, from
    phonenumbers' metadata - a check in microseconds before the parse and the matcher, which take far longer."""
    metadata = _phonenumbers().PhoneMetadata.metadata_for_region
    plans = []
    for region in NATIONAL_REGIONS:
        data = metadata(region)
        pattern = re.compile(data.general_desc.national_number_pattern)
        plans.append((region, data.national_prefix or "", pattern, frozenset(data.general_desc.possible_length)))
    return tuple(plans)


def _plausible(digits: str, prefix: str, pattern: re.Pattern[str], lengths: frozenset[int]) -> bool:
    bare = digits[len(prefix) :] if prefix and digits.startswith(prefix) else digits
    return any(len(d) in lengths and pattern.fullmatch(d) for d in {digits, bare})


def _national(text: NormalText) -> Spans:
    """Each run of digits and separators long enough to be a number, through the matcher of each region where
    it could be one (a matcher over the whole text per region would cost the text's length times the regions);
    the first region whose matcher takes in all of its digits settles it."""
    phonenumbers = _phonenumbers()
    exact = phonenumbers.Leniency.EXACT_GROUPING
    for run in _NATIONAL.finditer(text):
        candidate = run.group()
        digits = "".join(c for c in candidate if c.isdigit())
        if len(digits) < _MIN_NATIONAL_DIGITS or _NOT_A_PHONE.fullmatch(candidate):
            continue
        for region, prefix, pattern, lengths in _plans():
            if not _plausible(digits, prefix, pattern, lengths):
                continue
            try:
                number = phonenumbers.parse(candidate, region)
            except phonenumbers.NumberParseException:
                continue
            if not phonenumbers.is_valid_number_for_region(number, region):
                continue
            covered = 0
            for match in phonenumbers.PhoneNumberMatcher(candidate, region, leniency=exact):
                found = sum(c.isdigit() for c in match.raw_string)
                if found >= _MIN_NATIONAL_DIGITS and _SEPARATOR.search(match.raw_string):
                    covered += found
                    yield run.start() + match.start, run.start() + match.end
            if covered == len(digits):
                break
