"""`sam build` without Docker, for the template's architecture (the deployable artifact, `.aws-sam/build`)
and for this host's: on a host of the template's architecture (x86_64 today) they are one and the same build,
and the local stack and the tests load the very directory `sam deploy` ships; elsewhere a host build
(`.aws-sam/host/build`) comes from the same template, sources and hashed requirements, only the wheels'
platform differing. A build is skipped when its inputs (template, requirements, every source file it packs)
are unchanged since the last one.

SAM builds the layer with the `python3.13` on PATH (the template's runtime), so that interpreter is found
first (scripts/python313) and put on PATH for the build.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

from scripts.artifact import layer

ROOT = Path(__file__).resolve().parents[2]
SAM_CLI = "aws-sam-cli==1.170.0"
SOURCES = ("template.yaml", "layers/core", "functions", "workflows", "scripts/sam")
SKIPPED = {"__pycache__", ".mypy_cache", ".pytest_cache"}

Target = Literal["deploy", "host"]


class BuildError(RuntimeError):
    """`sam build` failed, or what it needs is missing; the message says what to do."""


def host_arch() -> str:
    """The template's name for this machine's architecture."""
    machine = platform.machine().lower()
    return {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def deploy_arch() -> str:
    """The functions' architecture, as template.yaml's Globals say."""
    text = (ROOT / "template.yaml").read_text(encoding="utf-8")
    found = re.search(r"^  Function:\n(?:    .*\n)*?    Architectures:\n(?:\s*#.*\n)*\s+- (\S+)", text, re.MULTILINE)
    if found is None:
        raise BuildError("template.yaml: Globals.Function.Architectures not found")
    return found.group(1)


def build_dir(target: Target) -> Path:
    """Where `target` is built; the host build is the deploy build when the architectures agree."""
    if target == "host" and host_arch() == deploy_arch():
        target = "deploy"
    return ROOT / ".aws-sam" / ("build" if target == "deploy" else "host/build")


def python313() -> str:
    found = subprocess.run(["sh", str(ROOT / "scripts" / "python313")], capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise BuildError(
            "sam build needs python3.13 (the template's Lambda runtime) and none was found: install Python 3.13 "
            "(pyenv install 3.13, or the distribution's python3.13) or set PYTHON313=/path/to/python3.13"
        )
    return found.stdout.strip()


def _inputs_digest(template_text: str) -> str:
    digest = hashlib.sha256(template_text.encode())
    for top in SOURCES:
        base = ROOT / top
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            rel = path.relative_to(ROOT)
            if SKIPPED.intersection(rel.parts) or any(part.endswith(".egg-info") for part in rel.parts):
                continue
            digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(SAM_CLI.encode())
    return digest.hexdigest()


def _template_for(arch: str) -> str:
    """template.yaml for `arch`: the architecture lines swapped, and relative code paths made absolute so the
    copy can live under .aws-sam."""
    text = (ROOT / "template.yaml").read_text(encoding="utf-8")
    deploy = deploy_arch()
    if arch == deploy:
        return text
    text = re.sub(rf"^(\s+)- {deploy}$", rf"\1- {arch}", text, flags=re.MULTILINE)
    text = re.sub(rf"(BuildArchitecture:\s*){deploy}", rf"\g<1>{arch}", text)
    return re.sub(
        r"^(\s+(?:CodeUri|ContentUri|ContextPath):\s*)([^\s!][^\s]*)$",
        lambda m: f"{m.group(1)}{ROOT / m.group(2)}",
        text,
        flags=re.MULTILINE,
    )


def build(target: Target, *, force: bool = False, quiet: bool = True) -> Path:
    """Builds `target` unless its inputs are unchanged; returns its build directory.

    One build at a time per checkout (an exclusive lock beside the build directories): pytest-xdist's workers
    each start a gateway, which builds when stale, and two builds into one directory leave half a layer."""
    lock_path = ROOT / ".aws-sam" / ".build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _build(target, force=force, quiet=quiet)


def _build(target: Target, *, force: bool, quiet: bool) -> Path:
    out = build_dir(target)
    if out == build_dir("deploy"):
        target = "deploy"
    arch = deploy_arch() if target == "deploy" else host_arch()
    template_text = _template_for(arch)
    digest = _inputs_digest(template_text)
    stamp = out / ".inputs-digest"
    if not force and stamp.exists() and stamp.read_text() == digest:
        return out
    if target == "deploy":
        template = ROOT / "template.yaml"
    else:
        template = out.parent / "template.yaml"
        template.parent.mkdir(parents=True, exist_ok=True)
        template.write_text(template_text, encoding="utf-8")
    interpreter = python313()
    uv = Path(sys.executable).with_name("uv")
    env = {
        **os.environ,
        "PATH": f"{Path(interpreter).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SAM_CLI_TELEMETRY": "0",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    command = [str(uv) if uv.exists() else "uv", "tool", "run", "--python", sys.executable, "--from", SAM_CLI]
    command += ["sam", "build", "--template-file", str(template), "--build-dir", str(out)]
    shutil.rmtree(out, ignore_errors=True)
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=quiet, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"sam build ({target}, {arch}) failed:\n{(result.stdout or '')[-4000:]}{result.stderr or ''}")
    layer.prune(layer.site_packages(out))
    stamp.write_text(digest)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("targets", nargs="*", help="deploy (the template's architecture) and/or host (default: both)")
    parser.add_argument("--force", action="store_true", help="build even when the inputs are unchanged")
    args = parser.parse_args(argv)
    targets: list[Target] = []
    for name in args.targets or ["deploy", "host"]:
        if name not in ("deploy", "host"):
            parser.error(f"unknown target {name!r}: deploy or host")
        targets.append("deploy" if name == "deploy" else "host")
    try:
        for target in targets:
            print(f"{target}: {build(target, force=args.force, quiet=False).relative_to(ROOT)}", flush=True)
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
