"""Secrets named by the words around them: assignments (`password=…`), basic-auth URLs, query parameters and
prose ("the password is …").

The assignment forms are detect-secrets' KeywordDetector patterns (configuration and quoted code forms) with
its filters for templated values, `$VARIABLES` and indirect references; basic-auth URLs are its
BasicAuthDetector's. Prose and URL query parameters are ours: detect-secrets reads code, not sentences. A
value named in prose must look like a secret (a digit, a symbol or a capital inside it, or quotes around it),
so "the password is required" stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from workspace_memory.governance.redaction.credentials import patterns, regex_spans
from workspace_memory.governance.redaction.normal import NormalText, Spans, lines


@cache
def _keywords() -> re.Pattern[str]:
    """Any of the keywords: a line without one is not tried against every form (a fast path, same result)."""
    from detect_secrets.plugins import keyword

    return re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE)


_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@\x00]*:([^\s/@\x00]+)@[\w\[]")
"""The password of a URL's userinfo (`redis://:p@ss!@host`): detect-secrets' basic-auth pattern needs a user
and refuses sub-delimiters (`!`, `$`, `&`) in the password, which people use."""

_SETTING_PARTS = (
    "length len min max minimum maximum count ttl age expiry expires expiration policy file path dir url uri arn "
    "id name names field hint prompt label enabled required rotation version regex pattern strength chars "
    "characters attempts retries timeout store manager provider type format"
)
_NOT_SECRET_PARTS = frozenset(_SETTING_PARTS.split())
"""What a name that starts with a keyword says it holds when its later words are these: a setting or a
reference (`password_min_length = 12`, `secret_arn = …`), not the secret."""
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


_NOT_VALUES = frozenset({"see", "none", "null", "nil", "true", "false", "yes", "no", "required", "optional"})
"""What stands after `password:` in notes about a setting, not in a secret's place (`password: required`)."""
_NOT_SECRET_NAMES = frozenset({"secretary", "secretaries", "secretsmanager", "passwordless"})


def _names_a_setting(line: str, start: int) -> bool:
    """The keyword is a setting's name, a word that only starts like one, or part of an ARN or a path."""
    if start > 0 and line[start - 1] in ":/":
        return True
    name = re.match(r"\w+", line[start:])
    parts = [p.lower() for p in _NAME_PARTS.findall(name.group())] if name else []
    return bool(parts) and (parts[0] in _NOT_SECRET_NAMES or any(p in _NOT_SECRET_PARTS for p in parts[1:]))


_KEYWORD_STEMS = ("key", "pass", "pwd", "secret", "contrase")
"""A part of every one of detect-secrets' keywords: a line without any is not read further (a fast path: a
substring test costs far less than its keyword pattern tried at every position)."""


def keyword_secrets(text: NormalText) -> Spans:
    """`password=…`, `secret: …`, `api_key = "…"`: an unquoted value ends at the first whitespace; a name
    whose later words say it is a setting (`password_min_length`) is left alone."""
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword

    forms = {**keyword.CONFIG_DENYLIST_REGEX_TO_GROUP, **keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP}
    found = _keywords()
    yield from regex_spans(patterns(("basic_auth.BasicAuthDetector",)), text)
    yield from (match.span(1) for match in _URL_PASSWORD.finditer(text))
    for offset, line in lines(text):
        if not _mentions(line, _KEYWORD_STEMS) or not found.search(line) or heuristic.is_indirect_reference(line):
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
                if _names_a_setting(line, match.start()) or _REFERENCE.match(value) or value.lower() in _NOT_VALUES:
                    continue
                yield offset + start, offset + end


_PASSWORD_WORDS = (
    r"pass(?:word|wd|phrase|code)|pwd|pw|(?:recovery|backup) codes?|mot de passe|contrase[ñn]a|passwort"  # noqa: S105
    r"|kennwort|wachtwoord|senha|lösenord|salasana|hasło|haslo|parola|пароль"
)
_TOKEN_WORDS = (
    r"(?:api|access|auth|secret|private|signing|master|license|deploy|client|session)[ _-]?(?:key|token|secret)"  # noqa: S105
    r"|token|secret"
)
_PIN_WORDS = r"pin(?:[ _-]?code)?|otp|2fa code|mfa code|recovery code"
_CONNECTOR = (
    r"(?:\s+(?:(?:is|was|has\s+been)\s+)?(?:set|changed|reset|rotated|updated)\s+to\b:?"
    r"|\s*(?:[:=]|->|=>|→)"
    r"|\s+(?:is|was|are|ist|est|es|é|är)\b(?:\s+(?:now|still|currently|just)\b)?:?)\s*"
)
_OPENING, _CLOSING = "\u201c\u2018\u00ab", "\u201d\u2019\u00bb"
"""Typographic quotes around a value: double and single curly quotes, guillemets."""
_QUALIFIER = r"(?:\s+(?:for|of|on|to|at|in|from)\b(?:\s+(?!(?:is|was|are)\b)[\w.@/:'-]+){1,3})?"
_PROSE = re.compile(
    rf"(?i)(?<![^\W_])(?:(?P<password>{_PASSWORD_WORDS})|(?P<token>{_TOKEN_WORDS})|(?P<pin>{_PIN_WORDS}))"
    rf"(?![^\W_]){_QUALIFIER}{_CONNECTOR}"
    rf"(?:(?P<quote>['\"`{_OPENING}])(?P<quoted>[^'\"`{_CLOSING}\n\x00]{{4,128}})['\"`{_CLOSING}]"
    r"|(?P<bare>[^\s'\"`\x00]{4,128}))"
)
_PAIR = re.compile(
    rf"(?i)(?<![^\W_])(?:credentials?|creds|login|user(?:name)?\s*/\s*pass(?:word)?)(?![^\W_]){_CONNECTOR}"
    r"[\w.@+-]+\s*/\s*(?P<bare>[^\s'\"`\x00]{4,128})"
)
"""`credentials are admin / S3cret!`: the part after the slash is the password."""
_SENTENCE_END = ".,;:)]}>"
_SYMBOL = re.compile(r"[^\w\s]|\d|_")
_REFERENCE = re.compile(r"^(?:\$|%|\{|<|https?://|vault:|ssm:|arn:|op://|env[.:])|\(|\[|^[\w.]+\.\w+\(", re.IGNORECASE)


def _looks_secret(value: str, word: str) -> bool:
    """A bare value named as a password or token that is a secret, not a word of the sentence."""
    if _REFERENCE.search(value):
        return False
    if value.isdigit():  # a PIN, a passcode, a numeric password; a token is never digits alone
        return word != "token" and 4 <= len(value) <= 10
    if word == "token":
        has_letter = any(c.isalpha() for c in value)
        return len(value) >= 16 and has_letter and any(c.isdigit() for c in value)
    inner_capital = any(c.isupper() for c in value[1:])
    return len(value) >= 6 and (bool(_SYMBOL.search(value.strip("-"))) or inner_capital)


PROSE_STEMS = (
    *("pass", "pw", "code", "contrase", "kennwort", "wachtwoord", "senha", "lösenord", "salasana", "hasł"),
    *("hasl", "parola", "пароль", "token", "secret", "key", "pin", "otp", "cred", "login", "user"),
)
"""A part of every word `_PROSE` and `_PAIR` start from (test_redaction checks): the fast path's test."""


def _mentions(line: str, stems: tuple[str, ...]) -> bool:
    lower = line.lower()
    return any(stem in lower for stem in stems)


def prose_secrets(text: NormalText) -> Spans:
    """`the password is Tr0ub4dor&3`, `pwd → x9!kQ`, `token: 8f14e45f…`, `PIN 4821` in a sentence."""
    for offset, line in lines(text):
        if not _mentions(line, PROSE_STEMS):
            continue
        for match in _PROSE.finditer(line):
            yield from _prose_value(match, offset)
        for match in _PAIR.finditer(line):
            yield from _prose_value(match, offset)


_PLACEHOLDER = re.compile(r"[*x•·.#-]+|<[^>]*>|\$?\{+[^}]*\}+|\$\w+|%\w+%", re.IGNORECASE)
"""A value that stands for a secret: a mask (`********`), a template (`<TOKEN>`, `${API_KEY}`, `{{ … }}`) or
a variable (`$TOKEN`, `%TOKEN%`)."""
_TOKEN_VALUE = re.compile(r"[\w\-.~+/=]+")
"""A token's characters: a token named in prose ends where they do (`token:ghs_…@github.com` is a token and
the host it is sent to)."""


def _prose_value(match: re.Match[str], offset: int) -> Iterator[tuple[int, int]]:
    named = match.groupdict()
    word = next((name for name in ("token", "pin") if named.get(name)), "password")
    if named.get("quoted") is not None:
        start, end = match.span("quoted")
        if not _PLACEHOLDER.fullmatch(match.group("quoted").strip()):
            yield offset + start, offset + end
        return
    start, end = match.span("bare")
    value = match.group("bare")
    if word == "token":
        token = _TOKEN_VALUE.match(value)
        value = token.group() if token else ""
        end = start + len(value)
    while value and value[-1] in _SENTENCE_END:
        value, end = value[:-1], end - 1
    if _looks_secret(value, word):
        yield offset + start, offset + end


_QUERY_SECRET = re.compile(
    r"(?i)[?&](?:access_token|refresh_token|id_token|token|api[_-]?key|apikey|key|secret|client_secret|password|"
    r"sig|signature|x-amz-signature|x-amz-security-token|auth)=([^&\s#\x00]{12,})"
)


def query_secrets(text: NormalText) -> Spans:
    """`?token=…`, `&sig=…`, `&X-Amz-Signature=…` in a URL: a value of at least 12 characters with a digit."""
    for match in _QUERY_SECRET.finditer(text):
        value = match.group(1).rstrip(_SENTENCE_END)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            yield match.start(1), match.start(1) + len(value)
