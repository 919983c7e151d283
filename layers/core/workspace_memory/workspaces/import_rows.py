"""An archive's rows as the import reads them (docs/decisions/0069): the export's files, field for field, as
strict models. A row this service would never write (an unknown field, a wrong type, a forgotten entry, a
version that says it is purged yet holds text) refuses the whole archive before anything is stored."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from workspace_memory.kernel.clock import epoch_seconds
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType, Mode, Role
from workspace_memory.workspaces.import_errors import InvalidArchive


def _stamp(value: str) -> str:
    epoch_seconds(value)  # a time the service wrote (RFC 3339): expiries are computed from it
    return value


Stamp = Annotated[str, AfterValidator(_stamp)]


class Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel)


class VersionIn(Row):
    version: int = Field(ge=1)
    op: str = Field(min_length=1, max_length=32)
    author: str = Field(min_length=1)
    created_at: Stamp
    bytes: int = Field(ge=0)
    base_version: int | None
    restored_from: int | None
    admission_id: str | None
    turn_id: str | None
    superseded_at: Stamp | None
    purged: bool
    purged_at: Stamp | None
    purged_by: str | None
    content: str | None

    @model_validator(mode="after")
    def _stub_or_text(self) -> VersionIn:
        if self.purged != (self.content is None):
            raise ValueError("a purged version holds no text, and only a purged one")
        if self.content is not None and len(self.content.encode("utf-8")) != self.bytes:
            raise ValueError("a version's size is the size of its text")
        return self


class Previously(Row):
    summary: str
    until: str


class Cited(Row):
    kind: str
    ref: str
    sha256: str
    locator: str = ""


class EntryFields(Row):
    title: str
    summary: str
    body: str
    sources: list[Cited] = []
    key: str | None = None
    reason: str | None = None
    previously: Previously | None = None


class EntryIn(Row):
    entry_id: str = Field(pattern=r"^en_[0-9A-Za-z_-]{1,64}$")
    revision: int = Field(ge=1)
    scope: EntryScope
    scope_owner: str = Field(min_length=1)
    type: EntryType
    status: EntryStatus
    valid_from: Stamp
    author: str = Field(min_length=1)
    author_kind: str = Field(pattern=r"^(human|agent)$")
    superseded_at: Stamp | None
    superseded_by: int | None
    fields: EntryFields

    @model_validator(mode="after")
    def _kept(self) -> EntryIn:
        if self.status is EntryStatus.FORGOTTEN:
            raise ValueError("a forgotten entry is never in an archive")
        return self


class MemberIn(Row):
    user_id: str = Field(min_length=1)
    role: Role


class PolicyIn(Row):
    mode: Mode
    revision: int = Field(ge=0)
    clear_generation: int = Field(ge=0)


class RetentionIn(Row):
    history_days: int = Field(ge=1, le=365)
    agent_days: int = Field(ge=1, le=365)


M = TypeVar("M", bound=Row)


def rows_of(model: type[M], value: Any, name: str) -> list[M]:
    if not isinstance(value, list):
        raise InvalidArchive(f"{name} is not a list of rows")
    return [one_of(model, row, f"{name} row {number}") for number, row in enumerate(value)]


def one_of(model: type[M], value: Any, name: str) -> M:
    """The row, or a refusal that names where it is (never what it holds: no field name the archive chose)."""
    try:
        return model.model_validate(value)
    except ValidationError:
        raise InvalidArchive(f"{name} is not a row this service writes") from None
