"""The layer's requirements are what the lock says and cover what the code imports: a module imported by the
core, a function or the worker that no pinned distribution provides fails here, before a deploy does (the
integration twin, tests/integration/test_artifact.py, imports it all from the built artifact alone)."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from scripts.artifact import requirements

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CODE = (ROOT / "layers" / "core" / "workspace_memory", ROOT / "functions", ROOT / "workflows")
FIRST_PARTY = frozenset({"workspace_memory", "workflows"})


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(text: str) -> dict[str, str]:
    """Distribution name → version of every `name==version` line of a requirements file."""
    found = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", text, flags=re.MULTILINE)
    return {_normal(name): version for name, version in found}


def _runtime_imports(tree: ast.AST) -> set[str]:
    """Top-level modules a file imports at run time (at module level or inside functions), leaving out
    `if TYPE_CHECKING:` blocks and relative imports."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def third_party_imports() -> dict[str, set[str]]:
    """Third-party top-level module → the shipped files importing it."""
    found: dict[str, set[str]] = {}
    for base in SHIPPED_CODE:
        for path in base.rglob("*.py"):
            local = {p.stem for p in path.parent.glob("*.py")}
            for name in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
                if name in sys.stdlib_module_names or name in FIRST_PARTY or name in local or name == "__future__":
                    continue
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_layer_requirements_are_the_lock_exported() -> None:
    assert requirements.REQUIREMENTS.read_text(encoding="utf-8") == requirements.generate(), (
        "layers/core/requirements.txt is stale: run `make layer-requirements`"
    )


def test_every_requirement_is_an_exact_pin_with_hashes() -> None:
    text = requirements.REQUIREMENTS.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2].strip())
    assert entries
    for entry in entries:
        assert re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*==\S+", entry), entry
        assert "--hash=sha256:" in entry, entry


def test_the_mcp_sdk_and_dev_tools_stay_out_of_the_layer() -> None:
    names = pinned(requirements.REQUIREMENTS.read_text(encoding="utf-8"))
    assert not {"mcp", "moto", "pytest", "mypy", "playwright", "schemathesis", "uvicorn"} & names.keys()


def test_every_module_the_shipped_code_imports_is_pinned_in_the_layer() -> None:
    names = pinned(requirements.REQUIREMENTS.read_text(encoding="utf-8"))
    providers = packages_distributions()
    missing = {
        module: sorted(files)
        for module, files in third_party_imports().items()
        if not any(_normal(dist) in names for dist in providers.get(module, []))
    }
    assert missing == {}, f"imported by shipped code, provided by no pinned distribution: {missing}"


def test_the_import_scan_sees_lazy_imports_and_skips_type_checking_blocks() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import mypy_boto3_dynamodb\nelse:\n    import yaml\n"
        "def f():\n    import numpy.linalg\n    from bm25s import BM25\n"
    )
    assert _runtime_imports(tree) == {"typing", "yaml", "numpy", "bm25s"}


def test_the_check_fails_on_requirements_without_the_search_stack() -> None:
    """The requirements of 957382b (no numpy, bm25s, PyStemmer or wordllama) fail the coverage check."""
    old = "aws-lambda-powertools>=3.37.0\npydantic>=2.14.4\naws-encryption-sdk>=4.0.7\ntemporalio>=1.35.0\n"
    old_names = {_normal(n) for n in re.findall(r"^([A-Za-z0-9._-]+)[><=]", old, flags=re.MULTILINE)}
    providers = packages_distributions()
    uncovered = {
        module
        for module in third_party_imports()
        if not any(_normal(dist) in old_names for dist in providers.get(module, []))
    }
    assert {"numpy", "bm25s", "Stemmer", "wordllama"} <= uncovered
