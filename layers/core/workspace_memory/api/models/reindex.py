"""How far an owner's reindex of a workspace's search got: counts only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:
    from workspace_memory.search.reindex import ReindexProgress


class ReindexOut(OutModel):
    """`indexed` of `total` retained revisions are in the sealed snapshot; `decrypted` by this call. `complete`
    false: call again, from any client or process, to go on."""

    indexed: int
    total: int
    decrypted: int
    complete: bool

    @classmethod
    def of(cls, progress: ReindexProgress) -> Self:
        return cls.model_validate(progress, from_attributes=True)
