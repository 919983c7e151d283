"""The shape the project holds itself to (CONTRIBUTING.md, "Where things go"): no module over 400 lines and no
class over 300 outside `tests/`, so a change finds a room of readable size; a module that grows past it is
split by job, not by line count."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TREES = ("layers", "functions", "workflows", "scripts", "mcp_server")
MODULE_LINES = 400
CLASS_LINES = 300


def _sources() -> list[Path]:
    return sorted(path for tree in TREES for path in (ROOT / tree).rglob("*.py") if "/." not in str(path))


def test_the_trees_have_sources() -> None:
    assert len(_sources()) > 100


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _sources()
        if (lines := path.read_text(encoding="utf-8").count("\n")) > MODULE_LINES
    }
    assert long == {}


def test_no_class_is_over_300_lines() -> None:
    long = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > CLASS_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert long == {}
