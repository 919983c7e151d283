"""The one spelling detectors see: a text folded so that a new way of writing an old secret is the old way.

`normalise` applies NFKC (full-width digits, letters and at signs, ligatures, compatibility spaces), removes
what renders as nothing (Unicode format characters - zero-width space and joiners, BOM, soft hyphen, bidi
controls - variation selectors, the combining grapheme joiner), and maps every other space to ` `, every dash
to `-` and ideographic full stops to `.` (as IDNA does). Detectors take a `NormalText`, which only
`normalise` makes, so no detector can be handed the raw text by mistake.

Each normalised character remembers the original characters it came from, so a finding in the normalised
text is redacted as exactly the original characters that spell it, and the rest of the text stays as typed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import NewType

NormalText = NewType("NormalText", str)
"""Text as detectors see it: only `normalise` makes one."""

Spans = Iterator[tuple[int, int]]
"""What a detector yields: the [start, end) of each finding in the normalised text."""

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_DROPPED = frozenset({"\u034f", "\u115f", "\u1160", "\u3164", "\uffa0"})
"""Invisible but not format characters: the combining grapheme joiner and the Hangul fillers."""
_FULL_STOPS = frozenset({"\u3002", "\uff61"})


@dataclass(frozen=True)
class Normalised:
    """The normalised text, and for each of its characters the original span it came from (None: the text
    was ASCII, which normalising leaves as it is, so positions are the same)."""

    text: NormalText
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the normalised span [start, end): every character any of it came from."""
        if self.starts is None or self.ends is None:
            return start, end
        return self.starts[start], self.ends[end - 1]


def normalise(text: str) -> Normalised:
    """`text` folded for detection, with the map back to its own positions."""
    if text.isascii():
        return Normalised(NormalText(text))
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for run in _NON_ASCII.finditer(text):
        first, last = run.span()
        if first > at and unicodedata.combining(text[first]):
            first -= 1  # the ASCII letter a combining mark belongs to composes with it (e + ◌́ = é)
        parts.append(text[at:first])
        starts.extend(range(at, first))
        ends.extend(range(at + 1, first + 1))
        for start, end in _clusters(text, first, last):
            folded = _fold(text[start:end])
            parts.append(folded)
            starts.extend([start] * len(folded))
            ends.extend([end] * len(folded))
        at = last
    parts.append(text[at:])
    starts.extend(range(at, len(text)))
    ends.extend(range(at + 1, len(text) + 1))
    return Normalised(NormalText("".join(parts)), tuple(starts), tuple(ends))


def _clusters(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """A base character with the combining marks after it: what NFKC composes together."""
    while start < end:
        after = start + 1
        while after < end and unicodedata.combining(text[after]):
            after += 1
        yield start, after
        start = after


@lru_cache(maxsize=8192)
def _fold(cluster: str) -> str:
    return "".join(_fold_char(char) for char in unicodedata.normalize("NFKC", cluster))


def _fold_char(char: str) -> str:
    category = unicodedata.category(char)
    if category == "Cf" or char in _DROPPED or "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef":
        return ""
    if category == "Zs":
        return " "
    if category == "Pd" or char == "\u2212":
        return "-"
    if char in _FULL_STOPS:
        return "."
    return char


def lines(text: NormalText) -> Iterator[tuple[int, str]]:
    """Each line and its offset: detect-secrets' patterns are written for one line at a time."""
    at = 0
    for line in text.split("\n"):
        yield at, line
        at += len(line) + 1
