"""The mutation tooling still names the code it mutates: each curated guard's snippet stands exactly once in
its file (else `--curated` reports it `stale` and the guard goes unjudged), and each module in scope exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.mutation import CURATED, MODULES
from scripts.mutation_guards import CORE, Curated

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("guard", CURATED, ids=lambda guard: guard.guard)
def test_a_curated_guard_names_one_place_in_the_code(guard: Curated) -> None:
    assert (ROOT / guard.path).read_text(encoding="utf-8").count(guard.old) == 1


@pytest.mark.parametrize("module", MODULES)
def test_a_module_in_mutation_scope_exists(module: str) -> None:
    assert (ROOT / CORE / (module.replace(".", "/") + ".py")).is_file()
