"""The pairs a consolidation run puts to its judge (docs/decisions/0086): current entries of one scope, owner and
type whose vectors are near and whose words `search.claims` reads as the same statement or as two claims about
one subject. Pure: the service hands in the workspace's search index and reads nothing else.

Entries are only ever paired within one scope and owner, so a member's private entries meet only that member's
own, and a proposal never joins what two different people may read. Each chain is retired by at most one
proposal of a run (its nearest pair), and the newer of the two is always the one kept: freshness decides."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.search.claims import NEAR_COSINE, Relation, Words, relation

if TYPE_CHECKING:
    from workspace_memory.search.engine import HybridIndex, Positions, SearchDoc

NEIGHBOURS = 5
"""How many nearest entries each entry is compared with: near-duplicates and contradictions are among the nearest,
and the bound keeps a run linear in the workspace's size."""
BLOCK = 256
"""Rows of the cosine matrix computed at once (256 by 5,000 float32s: 5 MB)."""


@dataclass(frozen=True)
class Pair:
    retired: SearchDoc
    """The older of the two: what accepting the proposal retires."""
    kept: SearchDoc
    reading: Relation
    """What the similarity rule reads (the judge decides; the `scripted` judge agrees with it)."""
    cosine: float

    def candidate_id(self, workspace_id: str) -> str:
        retired, kept = self.retired, self.kept
        return candidate_id(workspace_id, retired.entry_id, retired.revision, kept.entry_id, kept.revision)


def candidate_id(workspace_id: str, retired: str, retired_revision: int, kept: str, kept_revision: int) -> str:
    """A proposal's id, a function of what it read: a second run over the same revisions names the same candidate,
    which exists already, so nothing is proposed twice. A revision that moves on is new evidence."""
    seen = f"{workspace_id}|{retired}@{retired_revision}|{kept}@{kept_revision}"
    return "ec_" + hashlib.sha256(seen.encode()).hexdigest()[:24]


def find_pairs(index: HybridIndex, now: float) -> list[Pair]:
    """The index's current documents paired as above, nearest first."""
    import numpy as np

    from workspace_memory.search.engine import tokenize

    columns = index.columns
    current = (columns.valid_to > now) & (columns.valid_from <= now)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for position in np.flatnonzero(current).tolist():
        group = (str(columns.scope[position]), str(columns.owner[position]), str(columns.type[position]))
        groups.setdefault(group, []).append(position)
    found: list[Pair] = []
    for positions in groups.values():
        if len(positions) < 2:
            continue
        docs = [index.docs[p] for p in positions]
        words = [Words.of(d.title, d.summary, d.body, d.key, tokenize) for d in docs]
        for i, j, cosine in _neighbours(index, np.array(positions, dtype=np.intp)):
            reading = relation(words[i], words[j], cosine)
            if reading is not Relation.UNRELATED:
                older, newer = sorted((docs[i], docs[j]), key=lambda d: (d.valid_from, d.entry_id))
                found.append(Pair(older, newer, reading, cosine))
    found.sort(key=lambda p: (-p.cosine, p.retired.entry_id, p.kept.entry_id))
    return _one_each(found)


def _neighbours(index: HybridIndex, positions: Positions) -> list[tuple[int, int, float]]:
    """Each document's `NEIGHBOURS` nearest others at `NEAR_COSINE` or more, as (i, j, cosine) with i < j, once
    each: a block of rows at a time, so memory stays `BLOCK` rows wide and the word rule runs at most
    `NEIGHBOURS` times per entry, whatever the group's size."""
    import numpy as np

    near: dict[tuple[int, int], float] = {}
    keep = min(NEIGHBOURS, len(positions) - 1)
    for start in range(0, len(positions), BLOCK):
        cosines = index.cosines_between(positions[start : start + BLOCK], positions)
        for row in range(cosines.shape[0]):
            cosines[row, start + row] = -1.0  # never its own neighbour
        best = np.argpartition(-cosines, keep - 1, axis=1)[:, :keep]
        for row, columns in enumerate(best.tolist()):
            for column in columns:
                cosine = float(cosines[row, column])
                if cosine >= NEAR_COSINE:
                    i, j = sorted((start + row, column))
                    near[(i, j)] = cosine
    return [(i, j, cosine) for (i, j), cosine in sorted(near.items())]


def _one_each(pairs: list[Pair]) -> list[Pair]:
    """Each chain retired at most once, and never into a chain this run retires: the nearest pairs first."""
    retired: set[str] = set()
    kept: set[str] = set()
    chosen: list[Pair] = []
    for pair in pairs:
        if pair.retired.entry_id in retired or pair.retired.entry_id in kept or pair.kept.entry_id in retired:
            continue
        retired.add(pair.retired.entry_id)
        kept.add(pair.kept.entry_id)
        chosen.append(pair)
    return chosen
