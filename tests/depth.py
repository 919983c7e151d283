"""How hard the suite pushes, from one setting: WM_TEST_DEPTH.

- `check` (`make check`): the fast unit tier, for feedback in under a minute; few generated examples.
- `test` (the default, `make test` and CI): every test, with race rounds and generated examples sized so the
  whole run fits in 20 minutes on a 2-core machine. Each race still runs real concurrency against the real
  stack and checks its invariant; it runs fewer rounds.
- `soak` (`make soak`): the full 200-round races and the long schemathesis run; what to run before
  changing the fence.

Race rounds come from `rounds()`; hypothesis examples from the profile named after the depth (tests/conftest.py
loads it) or from `examples()` where a test names its own count.
"""

from __future__ import annotations

import os
from typing import Literal

Depth = Literal["check", "test", "soak"]
DEPTHS: tuple[Depth, ...] = ("check", "test", "soak")


def _chosen(value: str) -> Depth:
    for depth in DEPTHS:
        if value == depth:
            return depth
    raise SystemExit(f"WM_TEST_DEPTH={value!r}: expected one of {', '.join(DEPTHS)}")


DEPTH = _chosen(os.environ.get("WM_TEST_DEPTH", "test"))

_ROUNDS: dict[Depth, float] = {"check": 0.1, "test": 0.2, "soak": 1.0}
"""The share of a soak's race rounds each depth runs (races are integration tests: seconds per round)."""

_EXAMPLES: dict[Depth, float] = {"check": 0.1, "test": 1.0, "soak": 5.0}
"""The multiple of a test's generated examples each depth runs (cheap in unit tests: a soak runs more)."""

HYPOTHESIS_EXAMPLES = round(100 * _EXAMPLES[DEPTH])
"""max_examples of the hypothesis profile named after the depth (100 is hypothesis' own default)."""


def rounds(soak: int, *, floor: int = 10) -> int:
    """Rounds of a race at this depth: `soak` in a soak, a share of it otherwise, never under `floor`."""
    return max(floor, round(soak * _ROUNDS[DEPTH]))


def examples(base: int, *, floor: int = 5) -> int:
    """Generated examples at this depth for a test that runs `base` at the default depth."""
    return max(floor, round(base * _EXAMPLES[DEPTH]))


def soaking() -> bool:
    return DEPTH == "soak"
