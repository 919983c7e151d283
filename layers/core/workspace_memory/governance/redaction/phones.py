"""Phone numbers, by Google's `phonenumbers`: international numbers (`+…`) valid in their country, any
country; national formats of `NATIONAL_REGIONS`, each only as that region groups its numbers (the matcher's
`EXACT_GROUPING`) and written with a separator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from workspace_memory.governance.redaction.normal import NormalText, Spans

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

_NATIONAL = re.compile(r"(?<![\w+.,:/-])\(?\d[\d ().\-/]{5,24}\d(?![\w:]|[.,]\d|-\w)")
_MIN_NATIONAL_DIGITS = 8
_SEPARATOR = re.compile(r"[ ().\-/]")
_NOT_A_PHONE = re.compile(r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4}|\d{1,3}(?:\.\d{1,3}){3}")
"""Dates (2024-05-06, 06/05/2024) and IPv4 addresses: skipped before the matchers, which reject them too, but
at a cost per region."""


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


_NUMBER_TYPES = (
    *("fixed_line", "mobile", "toll_free", "premium_rate", "shared_cost", "personal_number", "voip", "pager"),
    *("uan", "voicemail"),
)


@dataclass(frozen=True)
class _Plan:
    """A region's numbering plan, compiled once per process from phonenumbers' metadata: a check of a run of
    digits in microseconds, before the library's parse and matcher (which compile their patterns anew once
    Python's regex cache overflows, as it does with many regions) are asked about the few regions left."""

    region: str
    prefix: str
    lengths: frozenset[int]
    types: tuple[re.Pattern[str], ...]

    def could_be(self, digits: str) -> bool:
        bare = digits[len(self.prefix) :] if self.prefix and digits.startswith(self.prefix) else digits
        return any(
            len(national) in self.lengths and any(t.fullmatch(national) for t in self.types)
            for national in {digits, bare}
        )


@cache
def _plans() -> tuple[_Plan, ...]:
    metadata = _phonenumbers().PhoneMetadata.metadata_for_region
    plans = []
    for region in NATIONAL_REGIONS:
        data = metadata(region)
        descs = [getattr(data, name) for name in _NUMBER_TYPES]
        types = tuple(
            re.compile(d.national_number_pattern) for d in descs if d is not None and d.national_number_pattern
        )
        lengths = frozenset(data.general_desc.possible_length)
        plans.append(_Plan(region, data.national_prefix or "", lengths, types))
    return tuple(plans)


def _national(text: NormalText) -> Spans:
    """Each run of digits and separators long enough to be a number, through the matcher of each region where
    it could be one (a matcher over the whole text per region would cost the text's length times the regions);
    the first region whose matcher takes in all of a run's digits settles that run. Region by region, every
    run at once: the library's patterns of one region stay in Python's regex cache while they are used."""
    phonenumbers = _phonenumbers()
    exact = phonenumbers.Leniency.EXACT_GROUPING
    runs = [(run.start(), run.group(), _digits(run.group())) for run in _NATIONAL.finditer(text)]
    runs = [r for r in runs if len(r[2]) >= _MIN_NATIONAL_DIGITS and _SEPARATOR.search(r[1])]
    runs = [r for r in runs if not _NOT_A_PHONE.fullmatch(r[1])]
    settled: set[int] = set()
    for plan in _plans():
        for start, candidate, digits in runs:
            if start in settled or not plan.could_be(digits):
                continue
            covered = 0
            for match in phonenumbers.PhoneNumberMatcher(candidate, plan.region, leniency=exact):
                found = len(_digits(match.raw_string))
                if found >= _MIN_NATIONAL_DIGITS and _SEPARATOR.search(match.raw_string):
                    covered += found
                    yield start + match.start, start + match.end
            if covered == len(digits):
                settled.add(start)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())
