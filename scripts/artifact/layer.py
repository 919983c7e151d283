"""What the built layer holds: pruning what no import ever reads, the architecture of every compiled file, and
its size against Lambda's limit for a function and its layers unzipped.

Pruned after `sam build`, before anything runs it, so the tests load exactly what `sam deploy` ships: the
Rust sources temporalio's wheel carries beside its compiled bridge, the test suites of numpy and temporalio,
and C/C++/Cython sources and type stubs, none of which an import reads.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

LAMBDA_UNZIPPED_LIMIT = 262_144_000
"""Lambda's quota for a function's code and all its layers, unzipped (250 MiB)."""

PRUNED_DIRS = ("temporalio/bridge/sdk-core", "temporalio/bridge/src")
PRUNED_DIR_NAMES = frozenset({"tests"})
PRUNED_SUFFIXES = frozenset({".c", ".cpp", ".h", ".pyx", ".pxd", ".pyi"})
"""Never read by an import; `.pyi` only by type checkers."""

ELF_MACHINES = {0x3E: "x86_64", 0xB7: "arm64"}
"""ELF e_machine values, by the template's architecture names."""


def site_packages(build: Path) -> Path:
    """The layer's import root in a build directory (Lambda mounts it at /opt/python)."""
    return build / "CoreLayer" / "python"


def prunable(root: Path) -> list[Path]:
    """What `prune` deletes below `root`: whole directories first, then single files outside them."""
    dirs = [root / rel for rel in PRUNED_DIRS if (root / rel).is_dir()]
    dirs += [p for p in root.rglob("*") if p.is_dir() and p.name in PRUNED_DIR_NAMES]
    dirs = [d for d in dirs if not any(other in d.parents for other in dirs)]
    files = [
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in PRUNED_SUFFIXES and not any(d in p.parents for d in dirs)
    ]
    return dirs + files


def prune(root: Path) -> int:
    """Deletes what no import reads below `root`; returns the bytes freed."""
    freed = 0
    for path in prunable(root):
        if path.is_dir():
            freed += size(path)
            shutil.rmtree(path)
        else:
            freed += path.stat().st_size
            path.unlink()
    return freed


def size(root: Path) -> int:
    """Bytes of every file below `root`, as Lambda counts an unzipped package."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@dataclass(frozen=True)
class CompiledFile:
    path: str
    machine: str


def compiled_files(root: Path) -> list[CompiledFile]:
    """Every ELF file below `root` (shared objects and executables) with the architecture it was built for."""
    found: list[CompiledFile] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        with path.open("rb") as handle:
            header = handle.read(20)
        if len(header) < 20 or header[:4] != b"\x7fELF":
            continue
        machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
        found.append(CompiledFile(str(path.relative_to(root)), ELF_MACHINES.get(machine, hex(machine))))
    return found
