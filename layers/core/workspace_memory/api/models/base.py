"""The models' bases (camelCase on the wire, frozen) and what several contexts share: fields left out of
the JSON when absent, and the redaction findings a write answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from workspace_memory.kernel.terms import RedactionKind

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from collections.abc import Sequence

    from workspace_memory.entries.model import PossibleConflict
    from workspace_memory.governance.redaction import Finding


class ApiModel(BaseModel):
    """Request models: camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class OutModel(BaseModel):
    """Response models: camelCase on the wire; a reader (the worker's client) ignores fields it does not know."""

    model_config = ConfigDict(extra="ignore", alias_generator=to_camel, populate_by_name=True, frozen=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object this model is on the wire: what powertools' serializer makes of it, too."""
        return self.model_dump(mode="json", by_alias=True)


class Untrusted(OutModel):
    """Memory as an agent is handed it: machine-readable that it is context to weigh, never an instruction and
    never evidence (seed 004: "trust: untrusted, evidence: false"), whatever its text claims."""

    trust: Literal["untrusted"] = "untrusted"
    evidence: Literal[False] = False


def _is_none(value: object) -> bool:
    return value is None


def omitted_when_none() -> Any:
    """An optional field that is left out of the JSON, rather than sent as `null`, when it has no value."""
    return Field(default=None, exclude_if=_is_none)


class FindingOut(OutModel):
    """How many findings of one kind redaction made (or, for a human's text, would have made): never the text."""

    kind: RedactionKind
    count: int


def findings_out(found: tuple[Finding, ...]) -> list[FindingOut] | None:
    """The findings on the wire; none at all leaves the field out."""
    return [FindingOut(kind=f.kind, count=f.count) for f in found] or None


class PossibleConflictOut(OutModel):
    """A live entry a write may contradict (decisions/0087): its id and current revision, never its text."""

    entry_id: str
    revision: int


def conflicts_out(conflicts: Sequence[PossibleConflict]) -> list[PossibleConflictOut]:
    return [PossibleConflictOut(entry_id=c.entry_id, revision=c.revision) for c in conflicts]
