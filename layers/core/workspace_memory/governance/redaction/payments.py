"""Payment card numbers and IBANs: python-stdnum's check digits decide, our code only finds candidates.

Cards: 13-19 digits in groups separated by a space, a dash, a dot or a slash (after normalising, a no-break
space is a space and a full-width digit a digit), a known issuer range and length, and the Luhn check digit
(stdnum has the Luhn check but no issuer table). IBANs: two letters, two digits and the account, in either
case, compact or grouped by spaces or dashes; stdnum checks the country's length and format and mod-97.
"""

from __future__ import annotations

import re

from workspace_memory.governance.redaction.normal import NormalText, Spans

_DIGIT_GROUPS = re.compile(r"(?<![\w.,])\d+(?:[ .\-/]\d+)*(?!\w|[.,]\d)")
_DIGITS = re.compile(r"\d+")
_GROUP_SIZES = (3, 8)
"""How many digits each group of a grouped card number has (4-4-4-4, Amex 4-6-5, 19 digits 4-4-4-4-3, Diners
4-6-4): `2.718281828459045` is a number with a decimal point, not a card in two groups."""

_CARD_RANGES: tuple[tuple[int, int, tuple[int, ...]], ...] = (
    # (first IIN, last IIN, lengths), IINs compared on as many leading digits as they have.
    (4, 4, (13, 16, 19)),  # Visa
    (51, 55, (16,)),  # Mastercard
    (2221, 2720, (16,)),  # Mastercard 2-series
    (34, 34, (15,)),  # American Express
    (37, 37, (15,)),
    (6011, 6011, (16, 17, 18, 19)),  # Discover
    (644, 649, (16, 17, 18, 19)),
    (65, 65, (16, 17, 18, 19)),
    (3528, 3589, (16, 17, 18, 19)),  # JCB
    (300, 305, (14, 15, 16, 17, 18, 19)),  # Diners Club
    (36, 36, (14, 15, 16, 17, 18, 19)),
    (38, 39, (16, 17, 18, 19)),
    (62, 62, (16, 17, 18, 19)),  # UnionPay
    (50, 50, (13, 14, 15, 16, 17, 18, 19)),  # Maestro
    (56, 69, (13, 14, 15, 16, 17, 18, 19)),
)


def is_card_number(digits: str) -> bool:
    """A payment card number: a known issuer range, a length that range issues, and the Luhn check digit."""
    from stdnum import luhn

    if not digits.isdigit():
        return False
    issued = any(
        first <= int(digits[: len(str(first))]) <= last and len(digits) in lengths
        for first, last, lengths in _CARD_RANGES
    )
    return issued and luhn.is_valid(digits)


def _grouped(group: tuple[int, int]) -> bool:
    return _GROUP_SIZES[0] <= group[1] - group[0] <= _GROUP_SIZES[1]


def cards(text: NormalText) -> Spans:
    """From each group of digits on, the longest run of whole groups that is a card number (two cards written
    side by side are two findings)."""
    for run in _DIGIT_GROUPS.finditer(text):
        groups = [(run.start() + g.start(), run.start() + g.end()) for g in _DIGITS.finditer(run.group())]
        i = 0
        while i < len(groups):
            found = None
            digits = ""
            for j in range(i, len(groups)):
                if j > i and not (_grouped(groups[i]) and _grouped(groups[j])):
                    break
                digits += text[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and is_card_number(digits):
                    found = j
            if found is None:
                i += 1
                continue
            yield groups[i][0], groups[found][1]
            i = found + 1


_IBAN_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}")


def ibans(text: NormalText) -> Spans:
    """A candidate that runs on into the words that follow is cut back to the longest valid prefix that ends
    at a group boundary."""
    from stdnum import iban

    for match in _IBAN_CANDIDATE.finditer(text):
        candidate = match.group()
        for end in range(len(candidate), 14, -1):
            boundary = end == len(candidate) or candidate[end] in " -"
            if boundary and candidate[end - 1] not in " -" and iban.is_valid(candidate[:end].upper()):
                yield match.start(), match.start() + end
                break
