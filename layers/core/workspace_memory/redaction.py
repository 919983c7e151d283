"""Redaction before storage (DESIGN §13): what an agent writes loses its personal data and secrets.

`redact` replaces every finding with `[redacted:<kind>]` and counts the findings per kind; `findings` only
counts (a human's text is stored as typed and answered with warnings). Pure and deterministic: no I/O, no
network (detect-secrets' verification, which calls the providers, is never run), the same text always
redacts the same way. Redaction is idempotent: markers are masked before detection, so a marker is never
found again, and nothing next to one is found because of it.

Detectors are maintained libraries where they exist: `detect-secrets` (its plugins' patterns for cloud keys,
service tokens, private keys, JWTs, basic-auth URLs and `password=`-style assignments, with its heuristic
filters), `phonenumbers` (international numbers anywhere; national ones of a few regions only when grouped
like a phone number), `python-stdnum` (IBAN check digits and country formats; the Luhn check of cards). An
e-mail pattern (WHATWG's), a bearer-token pattern and the card IIN table are local: no maintained finder of
those in free text exists. The libraries are imported on first use, not at a handler's cold start.

Findings that overlap are merged into one marker named by the kind that comes first in `RedactionKind`.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from workspace_memory.errors import InvalidInput
from workspace_memory.terms import RedactionKind as Kind

MARKER = re.compile(r"\[redacted:(?:" + "|".join(kind.value for kind in Kind) + r")\]")
"""A marker left by an earlier redaction: never detected again."""

_MASK = "\x00"
"""What a marker is replaced by while detecting: no detector's pattern accepts it as part of a finding."""

PRECEDENCE = {kind: rank for rank, kind in enumerate(Kind)}


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
    parts: list[str] = []
    at = 0
    for span in spans:
        parts.append(text[at : span.start])
        parts.append(f"[redacted:{span.kind.value}]")
        at = span.end
    parts.append(text[at:])
    return Redacted("".join(parts), _count(spans))


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


def _spans(text: str) -> list[_Span]:
    """The merged, ordered findings of `text`, none touching a marker already in it."""
    markers = [m.span() for m in MARKER.finditer(text)]
    masked = text
    for start, end in markers:
        masked = masked[:start] + _MASK * (end - start) + masked[end:]
    found = [
        _Span(start, end, kind)
        for kind, detect in _DETECTORS
        for start, end in detect(masked)
        for start, end in _outside(start, end, markers)
    ]
    return _merge(found)


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


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line and its offset: detect-secrets' patterns are written for one line at a time."""
    at = 0
    for line in text.split("\n"):
        yield at, line
        at += len(line) + 1


# -- detect-secrets --------------------------------------------------------------------------------------

_CLOUD_PLUGINS = (
    "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "ibm_cloud_iam.IbmCloudIamDetector",
    "ibm_cos_hmac.IbmCosHmacDetector",
    "softlayer.SoftlayerDetector",
)
_TOKEN_PLUGINS = (
    "artifactory.ArtifactoryDetector",
    "cloudant.CloudantDetector",
    "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "mailchimp.MailchimpDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector",
    "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)
_EDGE = " \t\"'`=:"
"""Delimiters some plugins' patterns include around the secret: trimmed so the marker replaces only it."""

_MIN_GROUP = 8
"""A capturing group shorter than this is a prefix (`ghp` of a GitHub token), not the secret itself."""


def _plugin(path: str) -> Any:
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)


@cache
def _patterns(paths: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(pattern for path in paths for pattern in _plugin(path).denylist)


def _regex_spans(patterns: Iterable[re.Pattern[str]], text: str) -> Iterator[tuple[int, int]]:
    """Where the plugins' patterns match: the secret's capturing group when it has one, else the match."""
    for offset, line in _lines(text):
        for pattern in patterns:
            for match in pattern.finditer(line):
                groups = [match.span(i) for i in range(1, (match.re.groups or 0) + 1) if match.group(i)]
                start, end = max(groups, key=lambda g: g[1] - g[0], default=match.span())
                if end - start < _MIN_GROUP:
                    start, end = match.span()
                while start < end and line[start] in _EDGE:
                    start += 1
                while end > start and line[end - 1] in _EDGE:
                    end -= 1
                if start < end:
                    yield offset + start, offset + end


def _cloud_keys(text: str) -> Iterator[tuple[int, int]]:
    return _regex_spans(_patterns(_CLOUD_PLUGINS), text)


def _api_tokens(text: str) -> Iterator[tuple[int, int]]:
    return _regex_spans(_patterns(_TOKEN_PLUGINS), text)


_KEY_END = re.compile(r"-----END [A-Z0-9 ]*-----")
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z-]*: .*")


def _private_keys(text: str) -> Iterator[tuple[int, int]]:
    """The whole block: detect-secrets finds its `BEGIN … PRIVATE KEY` line; the block runs to its END line,
    or, without one, over the lines that look like its body (base64 and `Header: value` lines)."""
    for pattern in _patterns(("private_key.PrivateKeyDetector",)):
        for match in pattern.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] == "-":
                start -= 1
            end_marker = _KEY_END.search(text, match.end())
            if end_marker is not None:
                yield start, end_marker.end()
                continue
            end = text.find("\n", match.end())
            while end != -1:
                following = text.find("\n", end + 1)
                line = text[end + 1 : len(text) if following == -1 else following].strip()
                if not _KEY_BODY_LINE.fullmatch(line):
                    break
                end = following
            yield start, len(text) if end == -1 else end


_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.]*")


def _jwts(text: str) -> Iterator[tuple[int, int]]:
    """detect-secrets' JWT pattern and validity check; its pattern stops before the signature, so the span
    runs on over the signature's characters (a sentence's final period excepted)."""
    detector = _plugin("jwt.JwtTokenDetector")
    for offset, line in _lines(text):
        for pattern in detector.denylist:
            for match in pattern.finditer(line):
                if not detector.is_formally_valid(match.group()):
                    continue
                tail = _JWT_TAIL.match(line, match.end())
                end = tail.end() if tail else match.end()
                while end > match.start() and line[end - 1] == ".":
                    end -= 1
                yield offset + match.start(), offset + end


@cache
def _keywords() -> re.Pattern[str]:
    """Any of the keywords: a line without one is not tried against every form (a fast path, same result)."""
    from detect_secrets.plugins import keyword

    return re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE)


def _keyword_secrets(text: str) -> Iterator[tuple[int, int]]:
    """`password=…`, `secret: …`, `api_key = "…"`: detect-secrets' keyword patterns (configuration and quoted
    code forms) and its filters for templated values, `$VARIABLES` and indirect references. An unquoted value
    ends at the first whitespace; basic-auth URLs' passwords come from its BasicAuthDetector."""
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword

    forms = {**keyword.CONFIG_DENYLIST_REGEX_TO_GROUP, **keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP}
    keywords = _keywords()
    yield from _regex_spans(_patterns(("basic_auth.BasicAuthDetector",)), text)
    for offset, line in _lines(text):
        if not keywords.search(line) or heuristic.is_indirect_reference(line):
            continue
        for pattern, group in forms.items():
            at = 0
            # Not finditer: an unquoted value's match runs to the end of the line, over any later assignment.
            while (match := pattern.search(line, at)) is not None:
                start, end = match.span(group)
                if start > 0 and line[start - 1] not in "'\"`":
                    space = re.search(r"\s", line[start:end])
                    end = start + space.start() if space else end
                at = max(end, match.start() + 1)
                value = line[start:end]
                if not value or heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value):
                    continue
                yield offset + start, offset + end


# -- local patterns where no maintained finder exists -------------------------------------------------------

_BEARER = re.compile(r"(?i:\bbearer)[ \t]+([A-Za-z0-9\-._~+/]{20,}=*)")
"""RFC 6750's token68 after `Bearer`; at least 20 characters, so prose ("bearer of news") is not a token."""


def _bearer_tokens(text: str) -> Iterator[tuple[int, int]]:
    return (match.span(1) for match in _BEARER.finditer(text))


_EMAIL = re.compile(
    r"(?<![A-Za-z0-9.!#$%&'*+/=?^_`{|}~-])[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,63}\b"
)
"""WHATWG's "valid e-mail address" (what browsers check), with a dotted domain ending in a letter TLD."""


def _emails(text: str) -> Iterator[tuple[int, int]]:
    return (match.span() for match in _EMAIL.finditer(text))


_PLUS = re.compile(r"\+(?=[\d(])")
_LONGEST_PHONE = 32
"""Characters after a `+` that can still be part of one number (15 digits, their grouping, an extension)."""

NATIONAL_REGIONS = ("US", "GB", "DE", "FR")
"""Regions whose national formats are also found, and only when grouped (`(415) 555-0100`, `020 7946 0958`):
a bare run of digits in a national format is an order number or an id as often as a phone number."""


def _phones(text: str) -> Iterator[tuple[int, int]]:
    """International numbers (`+44 20 7946 0958`) that are valid numbers, in any country; grouped national
    numbers of `NATIONAL_REGIONS`. Dates, times, versions and bare digit runs are not phone numbers here."""
    import phonenumbers

    for plus in _PLUS.finditer(text):
        # From each `+` on, the longest run of words that is a valid number: the matcher's candidate would take
        # in what stands before (`+ +44 …`) or after (`+44 121 234 5678 00000`) and fail to parse.
        segment = text[plus.start() : plus.start() + _LONGEST_PHONE].split("\n", 1)[0]
        ends = [m.start() for m in re.finditer(r"\s", segment)] + [len(segment)]
        for end in reversed(ends):
            candidate = segment[:end].rstrip(" .,;:-")
            try:
                number = phonenumbers.parse(candidate, None)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                yield plus.start(), plus.start() + len(candidate)
                break
    for region in NATIONAL_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.EXACT_GROUPING):
            if not match.raw_string.isdigit():
                yield match.start, match.end


_DIGIT_GROUPS = re.compile(r"(?<![\w.])\d+(?:[ -]\d+)*(?![\w.]|[.,]\d)")
_DIGITS = re.compile(r"\d+")

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


def _cards(text: str) -> Iterator[tuple[int, int]]:
    """13-19 digits, optionally grouped by single spaces or dashes; from each group on, the longest run of
    whole groups that is a card number (two cards written side by side are two findings)."""
    for run in _DIGIT_GROUPS.finditer(text):
        groups = [(run.start() + g.start(), run.start() + g.end()) for g in _DIGITS.finditer(run.group())]
        i = 0
        while i < len(groups):
            found = None
            digits = ""
            for j in range(i, len(groups)):
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


_IBAN_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    """Country code, check digits and account, compact or in groups; python-stdnum checks the country's
    length and format and the mod-97 check digits. A candidate that runs on into following capitals is cut
    back to the longest valid prefix that ends at a group boundary."""
    from stdnum import iban

    for match in _IBAN_CANDIDATE.finditer(text):
        candidate = match.group()
        for end in range(len(candidate), 14, -1):
            boundary = end == len(candidate) or candidate[end] == " "
            if boundary and candidate[end - 1] != " " and iban.is_valid(candidate[:end]):
                yield match.start(), match.start() + end
                break


_DETECTORS = (
    (Kind.PRIVATE_KEY, _private_keys),
    (Kind.JWT, _jwts),
    (Kind.CLOUD_KEY, _cloud_keys),
    (Kind.API_TOKEN, _api_tokens),
    (Kind.BEARER_TOKEN, _bearer_tokens),
    (Kind.SECRET, _keyword_secrets),
    (Kind.CARD, _cards),
    (Kind.IBAN, _ibans),
    (Kind.EMAIL, _emails),
    (Kind.PHONE, _phones),
)
"""The one registry: every kind and its detector."""
