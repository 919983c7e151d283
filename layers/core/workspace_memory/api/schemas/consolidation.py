"""The consolidation workflow's request bodies: its judge's verdicts, and its run's counts."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.ids import IssuedId
from workspace_memory.search.claims import Relation

MAX_VERDICTS = 100


class StartStep(ApiModel):
    trigger: Annotated[str, Field(pattern=r"^(schedule|owner)$")] = "schedule"


class VerdictIn(ApiModel):
    retired_id: IssuedId
    retired_revision: Annotated[int, Field(ge=1)]
    kept_id: IssuedId
    kept_revision: Annotated[int, Field(ge=1)]
    relation: Relation


class ProposeStep(ApiModel):
    verdicts: Annotated[list[VerdictIn], Field(max_length=MAX_VERDICTS)]


class CountsIn(ApiModel):
    pairs: Annotated[int, Field(ge=0)] = 0
    judged: Annotated[int, Field(ge=0)] = 0
    proposed: Annotated[int, Field(ge=0)] = 0
    already_proposed: Annotated[int, Field(ge=0)] = 0
    stale: Annotated[int, Field(ge=0)] = 0
    left: Annotated[int, Field(ge=0)] = 0
