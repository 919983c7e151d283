"""An index's document metadata as arrays, built once with the index, so that a search's visibility and filters
are a handful of vector comparisons instead of a Python call per document (at 5,000 entries the per-document
predicate was most of a warm search). `entry_search` says what a caller may see in terms of these columns."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from workspace_memory.search.engine import SearchDoc

    Mask = NDArray[np.bool_]


@dataclass(frozen=True)
class Columns:
    """One row per document, in the index's order. `valid_to` is +inf while a revision is current."""

    entry_id: NDArray[np.str_]
    scope: NDArray[np.str_]
    owner: NDArray[np.str_]
    type: NDArray[np.str_]
    key: NDArray[np.str_]
    """The entry's key, or "" for an entry without one (a key is never empty)."""
    valid_from: NDArray[np.float64]
    valid_to: NDArray[np.float64]

    @classmethod
    def of(cls, docs: Sequence[SearchDoc]) -> Columns:
        import numpy as np

        def text(values: list[str]) -> NDArray[np.str_]:
            return np.array(values, dtype=np.str_) if values else np.zeros(0, dtype="<U1")

        return cls(
            entry_id=text([d.entry_id for d in docs]),
            scope=text([d.scope for d in docs]),
            owner=text([d.owner for d in docs]),
            type=text([d.type for d in docs]),
            key=text([d.key or "" for d in docs]),
            valid_from=np.array([d.valid_from for d in docs], dtype=np.float64),
            valid_to=np.array([math.inf if d.valid_to is None else d.valid_to for d in docs], dtype=np.float64),
        )

    def everything(self) -> Mask:
        import numpy as np

        return np.ones(len(self.entry_id), dtype=np.bool_)

    def current(self) -> Mask:
        """The revisions nothing has replaced yet."""
        import numpy as np

        return np.isinf(self.valid_to)

    def valid_at(self, at: float) -> Mask:
        """The revisions that were current at `at` (a revision replaced at exactly `at` no longer is)."""
        return (self.valid_from <= at) & (at < self.valid_to)

    def without(self, entry_ids: Collection[str]) -> Mask:
        import numpy as np

        if not entry_ids:
            return self.everything()
        return ~np.isin(self.entry_id, np.array(sorted(entry_ids), dtype=np.str_))

    def key_starts_with(self, prefix: str) -> Mask:
        import numpy as np

        return np.asarray(np.char.startswith(self.key, prefix), dtype=np.bool_)
