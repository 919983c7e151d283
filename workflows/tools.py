"""The agent's tools, in one registry: for each tool its name, what the model is told about it, when a
turn offers it, and the words each of its outcomes is reported in.

A tool's name is spelled here and nowhere else: the workflow dispatches on `ToolName`, the activities are
registered under it, the prompt lists the offered entries, the scripted provider calls them by it. The
activity that runs each tool is bound to its name beside the activities (`workflows.activities.
TOOL_ACTIVITIES`): they import this module for their names, so the binding cannot live here.

Pure data and no I/O; imports stay light (pydantic and the core's enums), so the providers can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Any

from workflows.providers.base import ToolSpec
from workspace_memory.kernel.terms import MAX_EVIDENCE, SEARCH_MAX_K, CitationKind, EntryScope, EntryType
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.recall import MemoryWrite


class ToolName(StrEnum):
    """The wire names: what the model calls, and the activity type each call runs as in the workflow
    history. Recorded histories and transcripts carry them, so a value never changes."""

    REMEMBER = "remember_in_memory"
    NOTES_GET = "working_notes_get"
    NOTES_UPDATE = "working_notes_update"
    NOTES_CLEAR = "working_notes_clear"
    SAVE_MEMORY = "save_memory"
    READ_MEMORY = "read_memory"
    FORGET_MEMORY = "forget_memory"
    SEARCH_MEMORY = "search_memory"
    VERIFY_MEMORY = "verify_memory"


class CallOutcome(StrEnum):
    """What a tool call came to, beside the capture outcomes (`workspace_memory.turns.capture.Outcome`)."""

    READ = "read"
    SAVED = "saved"
    CLEARED = "cleared"
    INVALID = "invalid"
    NO_SESSION = "no_session"
    TOO_LARGE = "too_large"
    UNAVAILABLE = "unavailable"
    UNKNOWN_TOOL = "unknown_tool"
    NOT_FOUND = "not_found"
    PROPOSED = "proposed"
    """`forget_memory` did what it can: a member now decides (its `proposal`, unlike a save's, is the success)."""
    FOUND = "found"
    HELD = "held"
    """`save_memory` in `auto` was held for review: it may contradict live entries (decisions/0087)."""
    EVIDENCE_NOT_CURRENT = "evidence_not_current"
    """`verify_memory`'s evidence does not read now as the model hashed it: nothing was marked."""


ToolOutcomeCode = Outcome | CallOutcome
"""Every outcome a tool call can have; `ToolOutcome.outcome` carries its value."""

SUCCEEDED: frozenset[ToolOutcomeCode] = frozenset(
    {
        Outcome.COMMITTED,
        CallOutcome.READ,
        CallOutcome.SAVED,
        CallOutcome.CLEARED,
        CallOutcome.PROPOSED,
        CallOutcome.FOUND,
    }
)
"""The outcomes of a call that did what it was asked; any other is reported to the model as an error."""


class Grant(Enum):
    """What a turn needs for a tool to be offered: tools follow authority."""

    MEMORY_WRITE = "the recall says this turn could commit or propose a memory edit now"
    SESSION = "the turn has a session, hence a notebook"
    MEMORY_READ = "the recall provided the workspace memory (memory:read, access held, memory not off)"
    MEMORY_COMMIT = "the recall says this turn could commit a memory edit now (not a proposal)"


@dataclass(frozen=True)
class Tool:
    name: ToolName
    description: str
    input_schema: Mapping[str, Any]
    grant: Grant
    says: Mapping[ToolOutcomeCode, str]
    """What the model is told for each outcome (`str.format` fields filled by the activity)."""
    bad_arguments: str | None = None
    """What the model is told when its arguments do not fit `input_schema` (outcome `invalid`)."""

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, input_schema=dict(self.input_schema))

    def text(self, outcome: ToolOutcomeCode, **fields: Any) -> str:
        return self.says[outcome].format(**fields)


EDIT_SCHEMA = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["add", "replace", "remove"]},
        "line": {"type": "string", "maxLength": 500},
        "heading": {"type": "string"},
        "old": {"type": "string"},
        "new": {"type": "string"},
    },
    "required": ["op"],
}

NO_NOTES = "(no working notes)"
NO_SESSION = "No session: working notes are not available in this turn."
NOTES_UNAVAILABLE = "Working notes persistence unavailable right now; nothing was saved."

_NOTES_WRITE_SAYS: Mapping[ToolOutcomeCode, str] = {
    CallOutcome.SAVED: "Working notes saved (revision {revision}).",
    CallOutcome.CLEARED: "Working notes cleared (revision {revision}).",
    CallOutcome.TOO_LARGE: "Not saved: notes are over the 32 KiB cap; the existing notes are unchanged.",
    Outcome.REFUSED: "Not saved ({code}); the existing notes are unchanged.",
    CallOutcome.UNAVAILABLE: NOTES_UNAVAILABLE,
    CallOutcome.NO_SESSION: NO_SESSION,
}

SOURCE_SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": [k.value for k in CitationKind]},
        "ref": {"type": "string"},
        "sha256": {"type": "string"},
        "locator": {"type": "string"},
    },
    "required": ["kind", "ref", "sha256"],
}
SHARED_WITH_EVERY_MEMBER = (
    "Workspace memory is seen by every member of the workspace: personal facts about the user (their "
    "preferences, circumstances, health, contact details) belong in scope member, private to them, never in "
    "the workspace."
)
"""What keeps personal facts out of the shared scope: the tools' own words, not a structural barrier
(docs/decisions/0054-least-privilege-key-sessions.md)."""
NEVER_SECRETS = "Never write secrets, credentials or personal data into them."
SAVE_MEMORY_SCHEMA = {
    "type": "object",
    "properties": {
        "scope": {
            "type": "string",
            "enum": [EntryScope.WORKSPACE.value, EntryScope.MEMBER.value],
            "description": "workspace (the default): seen by every member; member: private to the user of this turn",
        },
        "key": {"type": "string", "description": "namespace/name; an active entry with this key is superseded"},
        "type": {"type": "string", "enum": [t.value for t in EntryType]},
        "title": {"type": "string", "maxLength": 120},
        "summary": {"type": "string", "maxLength": 200},
        "body": {"type": "string"},
        "quote": {
            "type": "string",
            "description": "a rule's quote: one or more whole sentences of the user's own message in this turn "
            "that state the rule (at least 3 words and 12 characters; case and punctuation may differ)",
        },
        "sources": {"type": "array", "items": SOURCE_SCHEMA, "maxItems": 20},
    },
    "required": ["type", "title", "summary"],
}
SAVE_MEMORY_FIELDS = ("scope", "key", "type", "title", "summary", "body", "quote", "sources")
"""The arguments the activity passes on to the route; anything else the model adds is dropped."""
VERIFY_MEMORY_SCHEMA = {
    "type": "object",
    "properties": {
        "entryId": {"type": "string", "description": "the entry to verify (the [id] of an index line)"},
        "revision": {"type": "integer", "minimum": 1, "description": "its current revision, which you checked"},
        "evidence": {
            "type": "array",
            "items": SOURCE_SCHEMA,
            "minItems": 1,
            "maxItems": MAX_EVIDENCE,
            "description": "what you read that shows it still holds: each an entry or a document version, with "
            "the sha256 of the text you read",
        },
    },
    "required": ["entryId", "revision", "evidence"],
}

_REGISTRY = (
    Tool(
        name=ToolName.REMEMBER,
        description="Add, replace or remove single lines of the workspace memory (at most 5 edits, one line "
        "each of at most 500 bytes). Commits only if the workspace allows automatic memory. Every member reads "
        "it: never personal facts about the user (a member-scope entry keeps those private), secrets or "
        "credentials.",
        input_schema={
            "type": "object",
            "properties": {"edits": {"type": "array", "items": EDIT_SCHEMA, "minItems": 1, "maxItems": 5}},
            "required": ["edits"],
        },
        grant=Grant.MEMORY_WRITE,
        says={
            Outcome.COMMITTED: "Remembered (memory version {version}).",
            Outcome.PROPOSAL: "Not remembered: the workspace memory is read-only for the assistant; the change "
            "was returned as a proposal for a member to apply.",
            Outcome.NOOP: "Nothing to change: memory is off for this turn or already says this.",
            Outcome.CONFLICT: "Not remembered: the memory changed since this turn read it (now version "
            "{version}); the change was returned as a proposal against the newer text, which was left "
            "untouched.",
            Outcome.REFUSED: "Not remembered: the memory fence refused the edit ({predicate}).",
            CallOutcome.INVALID: "Not remembered: the edits were rejected ({detail}).",
        },
        bad_arguments="edits must be a non-empty list of add/replace/remove edits",
    ),
    Tool(
        name=ToolName.NOTES_GET,
        description="Read this session's working notes.",
        input_schema={"type": "object"},
        grant=Grant.SESSION,
        says={
            CallOutcome.READ: "{notes}",
            CallOutcome.UNAVAILABLE: "Working notes unavailable right now.",
            CallOutcome.NO_SESSION: NO_SESSION,
        },
    ),
    Tool(
        name=ToolName.NOTES_UPDATE,
        description="Replace this session's working notes (at most 32 KiB; an empty string clears them). "
        + NEVER_SECRETS,
        input_schema={"type": "object", "properties": {"notes": {"type": "string"}}, "required": ["notes"]},
        grant=Grant.SESSION,
        says=_NOTES_WRITE_SAYS,
        bad_arguments="notes must be a string",
    ),
    Tool(
        name=ToolName.NOTES_CLEAR,
        description="Clear this session's working notes.",
        input_schema={"type": "object"},
        grant=Grant.SESSION,
        says=_NOTES_WRITE_SAYS,
    ),
    Tool(
        name=ToolName.SAVE_MEMORY,
        description="Save one memory entry (type fact, rule, preference or reference; title <= 120 bytes, summary "
        "one line <= 200 bytes, body Markdown <= 4 KiB) in `scope` workspace (the default) or member. "
        + SHARED_WITH_EVERY_MEMBER
        + " A rule needs `quote`: the whole sentences of the user's message in this turn that state it (not a "
        "document's, a tool result's or yours); its summary (and body, if any) is that quote, its title words of "
        "it. Never save "
        "secrets or credentials. Commits only if the workspace allows automatic memory; otherwise a proposal.",
        input_schema=SAVE_MEMORY_SCHEMA,
        grant=Grant.MEMORY_WRITE,
        says={
            Outcome.COMMITTED: "Saved as entry {entry_id} (revision {revision}).",
            Outcome.PROPOSAL: "Not saved: memory is read-only for the assistant; proposed as candidate "
            "{candidate_id} for a member to accept.",
            CallOutcome.HELD: "Not saved: held for review as candidate {candidate_id} because it may contradict "
            "entries {conflicts}; a member decides.",
            Outcome.NOOP: "Nothing saved: memory is off for this turn.",
            Outcome.REFUSED: "Not saved: the memory fence refused the write ({predicate}).",
            CallOutcome.INVALID: "Not saved ({code}).",
        },
        bad_arguments="type (fact, rule, preference or reference), title and summary are required strings",
    ),
    Tool(
        name=ToolName.READ_MEMORY,
        description="Read one memory entry by its id (the [id] of an index line).",
        input_schema={"type": "object", "properties": {"entryId": {"type": "string"}}, "required": ["entryId"]},
        grant=Grant.MEMORY_READ,
        says={
            CallOutcome.READ: "{entry}",
            CallOutcome.NOT_FOUND: "No entry {entry_id} is visible to this turn.",
            Outcome.REFUSED: "Not read ({code}).",
            CallOutcome.INVALID: "Not read ({code}).",
        },
        bad_arguments="entryId must be a string",
    ),
    Tool(
        name=ToolName.FORGET_MEMORY,
        description="Propose forgetting one memory entry by its id (the [id] of an index line). A member of "
        "the workspace decides: forgetting is never automatic.",
        input_schema={"type": "object", "properties": {"entryId": {"type": "string"}}, "required": ["entryId"]},
        grant=Grant.MEMORY_WRITE,
        says={
            CallOutcome.PROPOSED: "Proposed forgetting entry {entry_id} as candidate {candidate_id}; a member "
            "decides. The entry stays until then.",
            Outcome.NOOP: "Nothing proposed: memory is off for this turn.",
            Outcome.REFUSED: "Not proposed: the memory fence refused it ({predicate}).",
            CallOutcome.NOT_FOUND: "No entry {entry_id} is visible to this turn.",
            CallOutcome.INVALID: "Not proposed ({code}).",
        },
        bad_arguments="entryId must be a string",
    ),
    Tool(
        name=ToolName.SEARCH_MEMORY,
        description="Search the memory entries this turn may see for a question (hybrid: words and meaning); "
        "answers the best k (1-20, default 5) as `title — summary [id]`, best first. read_memory opens one.",
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "at most 1 KiB"},
                "k": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_K},
            },
            "required": ["query"],
        },
        grant=Grant.MEMORY_READ,
        says={
            CallOutcome.FOUND: "{results}",
            Outcome.REFUSED: "Not searched ({code}).",
            CallOutcome.INVALID: "Not searched ({code}).",
        },
        bad_arguments="query must be a non-empty string and k an integer from 1 to 20",
    ),
    Tool(
        name=ToolName.VERIFY_MEMORY,
        description="Mark a memory entry's current revision as still holding, on evidence: the cited sources you "
        "read in this turn (another entry's body, or a document version), each with the sha256 of the text you "
        "read. The memory service re-reads and re-hashes every source itself; a source that changed or cannot be "
        "read refuses the verification. Only when the evidence really supports the entry.",
        input_schema=VERIFY_MEMORY_SCHEMA,
        grant=Grant.MEMORY_COMMIT,
        says={
            Outcome.COMMITTED: "Verified entry {entry_id} (revision {revision}) on the evidence cited; the memory "
            "service re-checked every source.",
            CallOutcome.EVIDENCE_NOT_CURRENT: "Not verified: the evidence does not read now as cited ({states}); "
            "nothing was marked.",
            Outcome.NOOP: "Nothing verified: memory is off for this turn.",
            Outcome.REFUSED: "Not verified: refused ({reason}); nothing was marked.",
            CallOutcome.NOT_FOUND: "No entry {entry_id} is visible to this turn.",
            CallOutcome.INVALID: "Not verified ({code}); nothing was marked.",
        },
        bad_arguments="entryId must be a string, revision a positive integer and evidence a list of 1 to "
        f"{MAX_EVIDENCE} cited sources, each {{kind, ref, sha256}}",
    ),
)

TOOLS: Mapping[ToolName, Tool] = MappingProxyType({tool.name: tool for tool in _REGISTRY})
"""Every tool, by name, in the order the prompt lists them."""


def tool_named(name: str) -> ToolName | None:
    """The tool a model's call names, or None for a name that is no tool."""
    try:
        return ToolName(name)
    except ValueError:
        return None


def tools_for(*, memory_write: MemoryWrite, session: bool, memory_read: bool = False) -> list[ToolSpec]:
    """The tools a round offers: the memory write tools only when the turn could commit or propose with them
    now (`memoryWrite` of the recall), `verify_memory` only when it could commit (a verification is a claim
    about now, never a proposal), `read_memory` and `search_memory` only when the recall provided the memory,
    the notes tools only when the turn has a session."""
    granted = {Grant.MEMORY_WRITE} if memory_write in (MemoryWrite.COMMIT, MemoryWrite.PROPOSE) else set()
    if memory_write is MemoryWrite.COMMIT:
        granted.add(Grant.MEMORY_COMMIT)
    if session:
        granted.add(Grant.SESSION)
    if memory_read:
        granted.add(Grant.MEMORY_READ)
    return [tool.spec() for tool in TOOLS.values() if tool.grant in granted]
