"""Redaction before storage (docs/architecture.md#redaction): what an agent writes loses its personal data and secrets.

`redact` replaces every finding with `[redacted:<kind>]` and counts the findings per kind; `findings` only
counts (a human's text is stored as typed and answered with warnings); `redact_written` is `redact` for a
text an agent writes, refused when nothing but markers would be left of it. `redact` counts what it replaces
by kind on the metrics port (`Redaction`, never the text); otherwise pure and deterministic: no I/O,
no network (detect-secrets' verification, which calls the providers, is never run), the same text always
redacts the same way. Redaction is idempotent: markers are masked before detection, so a marker is never
found again, and the lines a new marker lands on are read again until nothing new is found (a finding can
uncover another: a password's digits no longer run on into the phone number after it).

Detection always runs on the normalised text (`normal.py`: NFKC, format characters removed, odd spaces and
dashes folded), so a new spelling of an old secret is the old secret; what is replaced is exactly the
original characters behind each finding, and the rest of the text stays byte for byte as written.

Detectors are maintained libraries where they exist: `detect-secrets` (its plugins' patterns for cloud keys,
service tokens, private keys, JWTs, basic-auth URLs and `password=`-style assignments, with its heuristic
filters), `phonenumbers` and `python-stdnum`; local patterns only for what they lack (`credentials.py`,
`passwords.py`, `emails.py`, `phones.py`, `payments.py` say which). The libraries are imported on first use,
once per process, not at a handler's cold start.

Findings that overlap are merged into one marker named by the kind that comes first in `RedactionKind`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from workspace_memory.governance.redaction import credentials, emails, passwords, payments, phones
from workspace_memory.governance.redaction.normal import NormalText, normalise
from workspace_memory.governance.redaction.payments import is_card_number
from workspace_memory.kernel import metrics
from workspace_memory.kernel.errors import InvalidInput, RedactedToNothing
from workspace_memory.kernel.metrics import Metric
from workspace_memory.kernel.terms import RedactionKind as Kind

__all__ = [
    "MARKER",
    "Finding",
    "PersonalDataInKey",
    "Redacted",
    "RedactedToNothing",
    "findings",
    "is_card_number",
    "merge_findings",
    "redact",
    "redact_written",
    "refuse_personal_data_in_key",
]

MARKER = re.compile(r"\[redacted:(?:" + "|".join(kind.value for kind in Kind) + r")\]")
"""A marker left by an earlier redaction: never detected again."""

_MASK = "\x00"
"""What a marker is replaced by while detecting: no detector's pattern accepts it as part of a finding."""

PRECEDENCE = {kind: rank for rank, kind in enumerate(Kind)}

Detector = Callable[[NormalText], Iterable[tuple[int, int]]]

DETECTORS: tuple[tuple[Kind, tuple[Detector, ...]], ...] = (
    (Kind.PRIVATE_KEY, (credentials.private_keys,)),
    (Kind.JWT, (credentials.jwts,)),
    (Kind.CLOUD_KEY, (credentials.cloud_keys,)),
    (Kind.API_TOKEN, (credentials.api_tokens,)),
    (Kind.BEARER_TOKEN, (credentials.bearer_tokens,)),
    (Kind.SECRET, (passwords.keyword_secrets, passwords.prose_secrets, passwords.query_secrets)),
    (Kind.CARD, (payments.cards,)),
    (Kind.IBAN, (payments.ibans,)),
    (Kind.EMAIL, (emails.emails,)),
    (Kind.PHONE, (phones.phones,)),
)
"""The one registry: every kind and its detectors, each handed only the normalised text."""


class PersonalDataInKey(InvalidInput):
    """An entry key is found by an HMAC of it, and may name things in lists and URLs: it never holds personal
    data or a secret. The message names the kinds found, never the key."""

    code = "PERSONAL_DATA_IN_KEY"


@dataclass(frozen=True)
class Finding:
    """How many findings of one kind: what warnings and redaction counts report (never the text)."""

    kind: Kind
    count: int


@dataclass(frozen=True)
class Redacted:
    text: str
    findings: tuple[Finding, ...]

    @property
    def is_nothing(self) -> bool:
        """Something was found, and no letter or digit is left outside the markers."""
        return bool(self.findings) and not any(c.isalnum() for c in MARKER.sub("", self.text))


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: Kind


def redact(text: str) -> Redacted:
    """`text` with every finding replaced by its marker, and the counts per kind."""
    spans = _spans(text)
    if not spans:
        return Redacted(text, ())
    counts = _count(spans)
    for finding in counts:  # by kind, never the text
        metrics.count(Metric.REDACTION, finding.count, kind=finding.kind)
    return Redacted(_apply(text, spans)[0], counts)


def redact_written(text: str) -> Redacted:
    """`redact` for a text an agent writes: raises `RedactedToNothing` when only markers would be left."""
    redacted = redact(text)
    if redacted.is_nothing:
        kinds = ", ".join(f.kind.value for f in redacted.findings)
        raise RedactedToNothing(f"the text holds nothing but personal data or secrets (found: {kinds})")
    return redacted


def findings(text: str) -> tuple[Finding, ...]:
    """The counts `redact` would report, for warning a human whose text is stored as typed."""
    return _count(_spans(text))


def merge_findings(groups: Iterable[Iterable[Finding]]) -> tuple[Finding, ...]:
    """Counts of several texts added up (the edits of one capture), in the kinds' order."""
    total: Counter[Kind] = Counter()
    for group in groups:
        for finding in group:
            total[finding.kind] += finding.count
    return tuple(Finding(kind, total[kind]) for kind in Kind if total[kind])


def refuse_personal_data_in_key(key: str) -> None:
    """Raise `PersonalDataInKey` when an entry key holds anything redaction would remove."""
    found = findings(key)
    if found:
        kinds = ", ".join(f.kind.value for f in found)
        raise PersonalDataInKey(f"an entry key must not hold personal data or secrets (found: {kinds})")


def _count(spans: Iterable[_Span]) -> tuple[Finding, ...]:
    counts = Counter(span.kind for span in spans)
    return tuple(Finding(kind, counts[kind]) for kind in Kind if counts[kind])


_ROUNDS = 4
"""Detection passes at most: a finding can change what its neighbours look like (a password's digits no longer
run on into the phone number after it), so the lines of the redacted text that hold a new marker are read
again until nothing new is found there."""


def _spans(text: str) -> list[_Span]:
    """The merged, ordered findings of `text` in its own positions, none touching a marker already in it; what
    its redaction would still show found too, so that redacting the result again changes nothing."""
    spans = _detect(text)
    for _ in range(_ROUNDS - 1):
        if not spans:
            break
        redacted, kept, markers = _apply(text, spans)
        more = [
            _Span(*_back(kept, start + s.start, start + s.end), s.kind)
            for start, end in _lines_holding(redacted, markers)
            for s in _detect(redacted[start:end])
        ]
        if not more:
            break
        spans = _merge(spans + more)
    return spans


def _lines_holding(text: str, positions: list[int]) -> list[tuple[int, int]]:
    """The [start, end) of each line of `text` that holds one of `positions`, once each, in order."""
    found: dict[int, int] = {}
    for at in positions:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        found[start] = len(text) if end == -1 else end
    return sorted(found.items())


def _detect(text: str) -> list[_Span]:
    """One pass of every detector over the normalised `text`, mapped back to `text`'s own positions."""
    normal = normalise(text)
    markers = [m.span() for m in MARKER.finditer(normal.text)]
    masked = normal.text
    for start, end in markers:
        masked = NormalText(masked[:start] + _MASK * (end - start) + masked[end:])
    found = [
        _Span(*normal.original(start, end), kind)
        for kind, detectors in DETECTORS
        for detect in detectors
        for start, end in detect(masked)
        for start, end in _outside(start, end, markers)
    ]
    return _merge(found)


def _apply(text: str, spans: list[_Span]) -> tuple[str, list[tuple[int, int]], list[int]]:
    """`text` with each span replaced by its marker; where each kept stretch of `text` starts, in the result and
    in `text` (to map a position of the result back); and where each marker starts in the result."""
    parts: list[str] = []
    kept: list[tuple[int, int]] = []
    markers: list[int] = []
    at = length = 0
    for span in spans:
        kept.append((length, at))
        parts.append(text[at : span.start])
        length += span.start - at
        markers.append(length)
        marker = f"[redacted:{span.kind.value}]"
        parts.append(marker)
        length += len(marker)
        at = span.end
    kept.append((length, at))
    parts.append(text[at:])
    return "".join(parts), kept, markers


def _back(kept: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """A span of the redacted text, which lies outside its markers, in the original text's positions."""
    stretch = max(i for i, (at, _) in enumerate(kept) if at <= start)
    shift = kept[stretch][1] - kept[stretch][0]
    return start + shift, end + shift


def _outside(start: int, end: int, markers: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of [start, end) that are not markers (a mask is never redacted again)."""
    for m_start, m_end in markers:
        if m_end <= start or m_start >= end:
            continue
        if start < m_start:
            yield start, m_start
        start = max(start, m_end)
    if start < end:
        yield start, end


def _merge(spans: list[_Span]) -> list[_Span]:
    merged: list[_Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end, PRECEDENCE[s.kind])):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            kind = min(last.kind, span.kind, key=PRECEDENCE.__getitem__)
            merged[-1] = _Span(last.start, max(last.end, span.end), kind)
        else:
            merged.append(span)
    return merged
