"""E-mail addresses, a local pattern: no maintained finder of addresses in prose exists (`email-validator`
validates a given string). WHATWG's valid address widened to Unicode local parts and internationalised
domains (labels of any script, `xn--` labels), a dotted domain ending in a TLD; and the spelled-out forms
people use to dodge scrapers, `name [at] example [dot] com` or `name at example dot com`. A full-width at sign
and zero-width characters inside an address are the normaliser's business, not this pattern's.
"""

from __future__ import annotations

import re

from workspace_memory.governance.redaction.normal import NormalText, Spans, lines

_ATEXT = r"[\w.!#$%&'*+/=?^`{|}~-]"
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_TLD = r"(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{2,59})"
_EMAIL = re.compile(rf"(?<!{_ATEXT}){_ATEXT}+@(?:{_LABEL}\.)+{_TLD}(?!\w|:[A-Za-z_~/.-])")
"""Not an scp-style remote (`git@github.com:acme/api.git`): a host and a path, not a mailbox (a port after
the host, as in a URL's `pass@host:5432`, still ends an address)."""

_OPEN, _CLOSE = r"[(\[{<]", r"[)\]}>]"
_SPELLED_DOT = rf"\s*{_OPEN}\s*dot\s*{_CLOSE}\s*|\s+dot\s+"
_AT = re.compile(rf"(?i)\s*{_OPEN}\s*at\s*{_CLOSE}\s*|\s+at\s+")
_LOCAL_BEFORE = re.compile(rf"(?i)(?<![\w.+-])[\w.+-]+(?:(?:{_SPELLED_DOT})[\w+-]+)*\Z")
_DOMAIN_AFTER = re.compile(rf"(?i)[^\W_][\w-]*(?:(?:{_SPELLED_DOT}|\.)[^\W_][\w-]*)+(?!\w)")
_DOTS = re.compile(rf"(?i){_SPELLED_DOT}|\.")
_WORD_DOT = re.compile(rf"(?i){_SPELLED_DOT}")
_LOCAL_CHARS = 128
_COMMON_TLDS = (
    "com net org edu gov mil int io co ai app dev info biz me tech xyz online site email cloud page "
    "us uk de fr es it nl be ch at se no dk fi pl cz pt ie au nz ca in jp cn kr br mx ar ru eu sg hk za"
)
COMMON_TLDS = frozenset(_COMMON_TLDS.split())
"""TLDs an address spelled `name at example dot com` may end in: plain words around `at` and `dot` are prose
far more often than an address, unless they end in a TLD everyone knows."""


def emails(text: NormalText) -> Spans:
    """Only lines with an `@` are searched for addresses (most have none), and only the words around each
    `at` for a spelled one."""
    for offset, line in lines(text):
        if "@" in line:
            yield from ((offset + m.start(), offset + m.end()) for m in _EMAIL.finditer(line))
    yield from _spelled(text)


def _spelled(text: NormalText) -> Spans:
    """`name [at] example [dot] com` with any TLD; `name at example dot com` when `dot` is spelled and the
    TLD is a common one."""
    for at in _AT.finditer(text):
        local = _LOCAL_BEFORE.search(text, max(0, at.start() - _LOCAL_CHARS), at.start())
        domain = _DOMAIN_AFTER.match(text, at.end())
        if local is None or domain is None:
            continue
        tld = _DOTS.split(domain.group())[-1].lower()
        if at.group().strip().startswith(("(", "[", "{", "<")):
            if tld.isalpha() and len(tld) >= 2:
                yield local.start(), domain.end()
        elif tld in COMMON_TLDS and _WORD_DOT.search(text, local.start(), domain.end()):
            yield local.start(), domain.end()
