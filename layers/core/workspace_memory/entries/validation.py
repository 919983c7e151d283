"""What the entry service checks itself (the agent path does not pass through the HTTP schemas), and what
redaction does to a draft: an agent's text is redacted before storage, a human's is stored as typed with
warnings (docs/architecture.md#redaction)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from workspace_memory.document.versions import utf8_size
from workspace_memory.entries.model import Draft
from workspace_memory.governance.redaction import Finding, findings, redact, redact_written, refuse_personal_data_in_key
from workspace_memory.kernel.errors import (
    InvalidAgentName,
    InvalidEntryKey,
    InvalidInput,
    InvalidSourceRef,
    PayloadTooLarge,
)
from workspace_memory.kernel.terms import CitationKind, EntryScope
from workspace_memory.store.attribute_forms import AGENT_NAME, ENTRY_ID, VERSION_NUMBER

MAX_TITLE_BYTES = 120
MAX_SUMMARY_BYTES = 200
MAX_BODY_BYTES = 4096
MAX_SOURCES = 20
MAX_SOURCE_FIELD_BYTES = 200
MAX_REASON_BYTES = 200
KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,127}")
"""`namespace/name`, lower case: a key names a slot, it is not prose."""
KEY_PREFIX_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}(/[a-z0-9._-]{0,128})?")
SHA256_PATTERN = re.compile(r"[0-9a-f]{64}")
SOURCE_REF = {CitationKind.ENTRY: ENTRY_ID, CitationKind.DOCUMENT_VERSION: VERSION_NUMBER}
"""What a source's `ref` is, per kind: the id it cites, never prose (decisions/0055)."""


def _line(value: str, what: str, limit: int, *, required: bool = True) -> None:
    size = utf8_size(value)
    if required and not value.strip():
        raise InvalidInput(f"{what} must not be empty")
    if "\n" in value or "\r" in value:
        raise InvalidInput(f"{what} must be one line")
    if size > limit:
        raise PayloadTooLarge(f"{what} is {size} bytes; the cap is {limit}", limit=limit)


def validate_key(key: str) -> None:
    if not KEY_PATTERN.fullmatch(key):
        raise InvalidEntryKey("key must be namespace/name: lower-case letters, digits, '.', '_', '-'")
    refuse_personal_data_in_key(key)


def validate_key_prefix(prefix: str) -> None:
    """A search filter's key prefix: the start of a key (`namespace/` or `namespace/na`), same alphabet."""
    if not KEY_PREFIX_PATTERN.fullmatch(prefix):
        raise InvalidEntryKey("key prefix must start a namespace/name key: lower-case letters, digits, '.', '_', '-'")


def validate_agent(agent: str) -> None:
    """An agent name is stored in clear (`scopeOwner`): a lower-case id that redaction finds nothing in."""
    if not AGENT_NAME.fullmatch(agent):
        raise InvalidAgentName("agent must be 1-64 characters of a-z 0-9 . _ - (starting with a letter or digit)")
    found = findings(agent)
    if found:
        kinds = ", ".join(f.kind.value for f in found)
        raise InvalidAgentName(f"an agent name must not hold personal data or secrets (found: {kinds})")


def validate(draft: Draft) -> None:
    """The service's own checks (the agent path does not pass through the HTTP schemas)."""
    text = draft.text
    _line(text.title, "title", MAX_TITLE_BYTES)
    _line(text.summary, "summary", MAX_SUMMARY_BYTES)
    size = utf8_size(text.body)
    if size > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is {size} bytes; the cap is {MAX_BODY_BYTES}", limit=MAX_BODY_BYTES)
    if len(text.sources) > MAX_SOURCES:
        raise InvalidInput(f"at most {MAX_SOURCES} sources")
    for source in text.sources:
        if not SHA256_PATTERN.fullmatch(source.sha256):
            raise InvalidInput("a source's sha256 must be 64 lower-case hex digits")
        if not SOURCE_REF[source.kind].fullmatch(source.ref):
            raise InvalidSourceRef(f"a {source.kind.value} source's ref must be the id it cites")
        _line(source.locator, "a source's locator", MAX_SOURCE_FIELD_BYTES, required=False)
    if text.key is not None:
        validate_key(text.key)
    if draft.reason is not None:
        _line(draft.reason, "reason", MAX_REASON_BYTES)
    if draft.agent is not None:
        validate_agent(draft.agent)
    if draft.agent is not None and draft.scope is not EntryScope.AGENT:
        raise InvalidInput("agent applies to agent-scope entries only")


def redacted(draft: Draft) -> tuple[Draft, tuple[Finding, ...]]:
    """Agent-authored text redacted before storage (docs/architecture.md#redaction): title, summary, body, locators,
    a supersession's reason (refs and the agent name are ids: refused, not redacted, when they are not); a
    title, summary or body that was nothing but secrets is refused (`RedactedToNothing`)."""
    parts = [redact_written(draft.text.title), redact_written(draft.text.summary), redact_written(draft.text.body)]
    sources = tuple(replace(s, locator=redact(s.locator).text) for s in draft.text.sources)
    text = replace(draft.text, title=parts[0].text, summary=parts[1].text, body=parts[2].text, sources=sources)
    found = tuple(f for p in parts for f in p.findings)
    reason = None if draft.reason is None else redact(draft.reason).text
    return replace(draft, text=text, reason=reason), found


def redaction_warnings(draft: Draft) -> tuple[Finding, ...]:
    """A human's text is stored as typed; the answer says what redaction would have removed (per kind)."""
    text = draft.text
    counts: dict[Any, int] = {}
    for value in (text.title, text.summary, text.body, draft.reason or "", *(s.locator for s in text.sources)):
        for finding in findings(value):
            counts[finding.kind] = counts.get(finding.kind, 0) + finding.count
    return tuple(Finding(kind, count) for kind, count in counts.items())
