"""The layer's requirements, generated from uv.lock: exact pins with hashes, so `sam build` installs the very
versions the suite ran (`make layer-requirements` writes them; tests/unit/test_artifact.py fails when stale).

The layer gets the project's runtime dependencies and nothing else: no dev group, no MCP group (the MCP
server runs beside the agent, never in Lambda), not the project itself (its package is the layer's source).
boto3 and botocore are pinned in the layer too, rather than taken from the Lambda runtime, whose copy changes
without notice: the deployed code then runs the botocore the tests ran (docs/decisions/0037-the-artifact.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "layers" / "core" / "requirements.txt"
HEADER = (
    "# Generated from uv.lock by `make layer-requirements` (scripts/artifact/requirements.py): do not edit.\n"
    "# The runtime dependencies of the shared layer, exact pins with hashes; boto3/botocore included on purpose.\n"
)


def _uv() -> str:
    candidate = Path(sys.executable).with_name("uv")
    return str(candidate) if candidate.exists() else "uv"


def generate() -> str:
    """The requirements file's text, as `uv export` derives it from the lock (never re-resolving)."""
    exported = subprocess.run(
        [
            _uv(),
            "export",
            "--frozen",
            "--no-default-groups",
            "--no-emit-project",
            "--no-header",
            "--no-annotate",
            "--format",
            "requirements-txt",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return HEADER + exported


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale instead of writing")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        if REQUIREMENTS.read_text(encoding="utf-8") != text:
            print(f"{REQUIREMENTS.relative_to(ROOT)} is stale: run `make layer-requirements`", file=sys.stderr)
            return 1
        return 0
    REQUIREMENTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
