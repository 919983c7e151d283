"""The one reader of request bodies, for every route of every function: `lambda_entry` vets each body before
routing (`readable`) and the resolver parses with `parse_json`, so no handler, model or service ever meets a
body this API cannot read, and none has to check for one.

A body, on any route (a route that takes none ignores a readable one), must be:

- at most `MAX_BODY_BYTES` (413 `PAYLOAD_TOO_LARGE`), or the cap its function declares (the exports function
  takes an archive: `ARCHIVE_BODY_BYTES`);
- declared `application/json` or `application/<name>+json` (RFC 6839), in any case, with parameters, a
  `charset` only if it is UTF-8; a missing or empty Content-Type is read as JSON, as powertools does, since
  the body must still parse (415 `UNSUPPORTED_MEDIA_TYPE` otherwise: form, multipart, text, XML, ...);
- UTF-8 (400 `INVALID_REQUEST`);
- nested at most `MAX_DEPTH` levels (400 `BODY_TOO_DEEP`), checked before parsing, so the parser never
  recurses deeper than twice that;
- I-JSON (RFC 7493): well-formed, no duplicate member names, no NaN or Infinity, no lone surrogate, numbers
  a double holds exactly (integers within +-(2**53 - 1)) (400 `INVALID_REQUEST`).

Messages say what is wrong and where (a character offset), never what the body held.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any

from workspace_memory.api.errors import BodyTooDeep, UnsupportedMediaType
from workspace_memory.kernel import errors

MAX_BODY_BYTES = 512 * 1024
"""The largest legitimate body is a Save of a 64 KiB document (`document.MAX_DOCUMENT_BYTES`); JSON may spell
each of its bytes as a six-byte `\\u00XX` escape: 384 KiB. Anything this size or smaller is parsed; services
then apply their own, smaller caps (413 too)."""
ARCHIVE_BODY_BYTES = 6_000_000
"""An import's body: an archive as its download gave it (at most 5 MB as Lambda carries it), under Lambda's 6 MB
request limit."""
MAX_DEPTH = 32
"""Nesting levels (an object or array is one). The deepest request model is 5 (an applied proposal,
`{proposal: {edits: [{...: any}]}}`); `tests/unit/api/test_body.py` checks every route's request schema stays far
below."""
MAX_SAFE_INTEGER = 2**53 - 1
"""I-JSON's exact integer range: what any client's JSON (JavaScript's included) means by the same digits."""

_MEDIA_TYPE = re.compile(r"application/(?:json|[a-z0-9!#$&^_.-][a-z0-9!#$&^_.+-]*\+json)")
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
"""A JSON string, or an unterminated one up to the end: possessive, so a stray quote costs no backtracking."""
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_ONE_BRACKET = str.maketrans("{}", "[]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def readable(event: dict[str, Any], cap: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """`event` as the resolver may take it, or a refusal (a `DomainError`): its body checked in the order of
    the module docstring, then handed on as text and declared `application/json`, the one type powertools
    then reads (it would fail on `Application/JSON` or a `+json` type, and parse forms)."""
    raw = event.get("body")
    if not raw:
        return event
    data = _within_cap(raw, bool(event.get("isBase64Encoded")), cap)
    check_media_type(_content_type(event))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.InvalidInput("request body must be UTF-8 JSON") from None
    parse_json(text)
    headers = {name: value for name, value in (event.get("headers") or {}).items() if name.lower() != "content-type"}
    headers["content-type"] = "application/json"
    return {**event, "headers": headers, "body": text, "isBase64Encoded": False}


def _within_cap(raw: str, encoded: bool, cap: int) -> bytes:
    """The body's bytes, refused before decoding anything when even its length says it is over the cap."""
    longest = (cap // 3 + 1) * 4 if encoded else cap  # base64: 4 characters per 3 bytes
    if len(raw) > longest:
        raise _too_large(cap)
    try:
        data = base64.b64decode(raw, validate=True) if encoded else raw.encode("utf-8", "surrogatepass")
    except binascii.Error:
        raise errors.InvalidInput("request body must be UTF-8 JSON") from None
    if len(data) > cap:
        raise _too_large(cap)
    return data


def _too_large(cap: int) -> errors.PayloadTooLarge:
    return errors.PayloadTooLarge(f"request body over {cap} bytes", limit=cap)


def _content_type(event: dict[str, Any]) -> str | None:
    for name, value in (event.get("headers") or {}).items():
        if name.lower() == "content-type":
            return str(value)
    return None


def check_media_type(content_type: str | None) -> None:
    """Refuses (415) a declared type that is not JSON, or JSON in a charset other than UTF-8."""
    if content_type is None or not content_type.strip():
        return
    media, *parameters = content_type.split(";")
    if not _MEDIA_TYPE.fullmatch(media.strip().lower()):
        raise UnsupportedMediaType("request body must be application/json")
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            raise UnsupportedMediaType("request body must be application/json in UTF-8")


def parse_json(text: str) -> Any:
    """The body as I-JSON within `MAX_DEPTH`, or a refusal: the resolver's JSON reader (powertools calls it
    for a route that takes a body) and `readable`'s check."""
    if nested_deeper_than(text, MAX_DEPTH):
        raise BodyTooDeep(f"request body nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(
            text, object_pairs_hook=_object, parse_constant=_constant, parse_int=_integer, parse_float=_float
        )
    except json.JSONDecodeError as exc:
        raise errors.InvalidInput(f"request body is not JSON: {exc.msg} at character {exc.pos}") from None
    if _SURROGATE_ESCAPE.search(text) and _holds_lone_surrogate(value):
        raise errors.InvalidInput("request body holds a lone surrogate (\\ud800-\\udfff): not Unicode text")
    return value


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether JSON `text` nests more than `limit` levels, without parsing it: strings dropped, only brackets
    kept, then `limit` rounds each removing every innermost pair. A pair left means deeper; more than `limit`
    brackets left open means so too (a truncated body still open that deep). What passes has at most `limit`
    closed levels plus `limit` open ones: the parser's recursion is bounded either way."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_ONE_BRACKET)
    for _ in range(limit):
        if "[]" not in brackets:
            break
        brackets = brackets.replace("[]", "")
    return "[]" in brackets or brackets.count("[") > limit


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise errors.InvalidInput("request body repeats a member name in one object")
    return found


def _constant(_name: str) -> Any:
    raise errors.InvalidInput("request body holds NaN or Infinity, which are not JSON")


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > len(str(MAX_SAFE_INTEGER)) or abs(number := int(digits)) > MAX_SAFE_INTEGER:
        raise errors.InvalidInput(f"request body holds an integer beyond +-{MAX_SAFE_INTEGER}")
    return number


def _float(digits: str) -> float:
    number = float(digits)
    if not math.isfinite(number):
        raise errors.InvalidInput("request body holds a number beyond a double's range")
    return number


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether any string or member name is not Unicode text (JSON can spell half a surrogate pair)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False
