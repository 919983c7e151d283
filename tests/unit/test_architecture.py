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


CORE = ROOT / "layers" / "core" / "workspace_memory"
DOMAIN = ("document", "turns", "entries", "search", "governance", "workspaces", "kernel", "pages")
"""The contexts that speak the domain: only `store/` (and the adapters) spell how an item is stored."""
NOT_ITEMS = {
    # Names a stored attribute shares with another vocabulary, per module, each with what it is there.
    "document/versions.py": {"kind", "version"},  # the version's encryption context
    "turns/admission.py": {"kind"},  # the admission message's encryption context
    "turns/capture.py": {"baseVersion"},  # the canonical request a capture's hash is taken of
    "turns/notes.py": {"kind", "revision"},  # the notes' encryption context
    "entries/candidate_diff.py": {"type"},  # a field of the diff the wire shows
    "entries/candidates.py": {"type", "scope"},  # the candidate's sealed draft
    "entries/model.py": {"kind", "revision", "sha256"},  # encryption contexts, sealed sources
    "search/search_snapshot.py": {"kind", "entriesRevision", "generation"},  # the snapshot's encryption context
    "workspaces/export_archive.py": {"kind"},  # an export file's encryption context
    "workspaces/import_archive.py": {"kind", "scope", "format"},  # a staged file's context, the manifest's fields
    "workspaces/import_apply.py": {"members", "chains", "versions", "revisions"},  # what a step counts
    "workspaces/archive_signature.py": {"kind", "format"},  # the signature's encryption context
    "workspaces/workspace_names.py": {"kind"},  # the name's encryption context
    "workspaces/key_binding.py": {"kind", "keySession"},  # the binding's encryption context
    "pages/model.py": {"kind"},  # a page part's encryption context
    "governance/changefeed.py": {"kind", "version", "op", "type", "actor"},  # the event's detail, the stream's identity
}


def _stored_names() -> set[str]:
    from workspace_memory.store.attributes import KINDS

    return {name for kind in KINDS for name in kind.attributes if not name.endswith("#")}


def _spelled(tree: ast.AST, names: set[str]) -> set[str]:
    """The stored names a module uses as an item's key: `x["name"]`, `x.get("name")`, `{"name": ...}`."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            found.append(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            found.extend(node.args[:1])
        elif isinstance(node, ast.Dict):
            found.extend(key for key in node.keys if key is not None)
    return {c.value for c in found if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in names}


def test_the_store_declares_the_attribute_names() -> None:
    assert {"entryId", "scopeOwner", "ciphertext", "expiresAt", "openedBy", "role"} <= _stored_names()


def test_only_the_store_spells_how_an_item_is_stored() -> None:
    names = _stored_names()
    spelled = {}
    for context in DOMAIN:
        for path in sorted((CORE / context).rglob("*.py")):
            found = _spelled(ast.parse(path.read_text(encoding="utf-8")), names)
            if found:
                spelled[str(path.relative_to(CORE))] = found
    assert spelled == NOT_ITEMS
