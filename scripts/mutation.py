"""`make mutation`: mutation testing of the fence-critical modules with mutmut 3, outside CI.

Not a test and not in uv.lock: mutmut runs through `uv run --with`, layered over the project's .venv.

    .venv/bin/python -m scripts.mutation [--scope fence|modules] [--max-children 2] [--show] [GLOB ...]

mutmut 3 names mutants by their path below the working directory (`src/` stripped), and the layer's package
lives at layers/core/workspace_memory; so the run happens in a staged copy, .local/mutation/, where the
package sits at the top (`workspace_memory/...`) beside copies of tests/, scripts/, functions/, workflows/
and template.yaml. mutmut's own state stays in .local/mutation/mutants/, so a second run resumes and only
re-tests functions whose source changed. The working tree is never mutated.

Every pytest session of the integration tests would start its own moto server and Temporal dev server; mutmut
runs one short session per mutant, so this script starts one of each for the whole run and hands them to the
sessions through WM_TEST_MOTO_ENDPOINT / WM_TEST_TEMPORAL_ADDRESS (each session still provisions its own
table and key). The tests that need Temporal workers (turns, races) are not in the selection.

Scopes (mutant-name globs; GLOB arguments replace the scope):
- `fence` (default): the functions that judge authority or hold a guard - recall's access checks and
  status, the early refusal (`Authority.retired`), the fence's changes (`fence_changes`: typed changes now,
  so dropping or mis-building one is a mutant worth judging), capture's decision path, the identity, owner
  and replay checks of admission, a version's changes, Save, and applying a proposal. The DynamoDB spelling
  of the changes (adapters/dynamo_changes.py) is left out on purpose: mutmut only wraps its strings in "XX"
  (an invalid expression every test notices); weakening a clause, the meaningful mutant there, is what the
  curated list does (scripts/mutation_guards.py, docs/mutation.md).
- `modules`: every function of turns/ authority.py, capture.py, recall.py, admission.py and document/ service.py,
  commit.py and versions.py (~2,100 mutants: hours on this machine).

`--show` prints the diff of every surviving mutant in scope after the run.

`--curated` runs the hand-written guard mutants instead (scripts/mutation_guards.py and
mutation_entry_guards.py; `--only TEXT`, repeatable, keeps the guards whose name contains TEXT):
each removes or weakens one guard the way a careless edit would - a clause of a DynamoDB condition, a change
left out of a transaction, a comparison, an identity check - in a scratch copy (.local/guard-mutants/), runs
the tests meant to hold that guard and reports whether they failed. A guard whose snippet no longer matches
the source is reported as `stale` (update the list).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from scripts.localstack.stack import LocalStack, StackConfig
from scripts.mutation_entry_guards import ENTRY_CURATED
from scripts.mutation_guards import FENCE_CURATED, Curated

CURATED: list[Curated] = FENCE_CURATED + ENTRY_CURATED

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / ".local" / "mutation"
MUTMUT = "mutmut==3.8.1"
MODULES = [
    "turns.authority",
    "turns.capture",
    "turns.recall",
    "turns.admission",
    "document.service",
    "document.commit",
    "document.versions",
]
TESTS = [
    "tests/integration/turns/test_fence_guards.py",
    "tests/integration/turns/test_fence_matrix.py",
    "tests/integration/turns/test_recall.py",
    "tests/integration/document/test_document_api.py",
    "tests/integration/turns/test_automation_api.py",
    "tests/unit/turns/test_services.py",
]
COPIED = ["tests", "scripts", "functions", "workflows", "template.yaml", "pyproject.toml"]
SEP = "\u01c1"  # mutmut's separator between class and method in a mutant name

FENCE = [
    f"workspace_memory.turns.authority.x{SEP}Authority{SEP}has_access__mutmut_*",
    f"workspace_memory.turns.authority.x{SEP}Authority{SEP}slot_holds__mutmut_*",
    f"workspace_memory.turns.authority.x{SEP}Authority{SEP}key_session_valid__mutmut_*",
    f"workspace_memory.turns.authority.x{SEP}Authority{SEP}retired__mutmut_*",
    "workspace_memory.turns.authority.x_fence_changes__mutmut_*",
    "workspace_memory.turns.recall.x_recall_status__mutmut_*",
    f"workspace_memory.turns.capture.x{SEP}CaptureService{SEP}capture__mutmut_*",
    f"workspace_memory.turns.capture.x{SEP}CaptureService{SEP}_replay__mutmut_*",
    f"workspace_memory.turns.capture.x{SEP}CaptureService{SEP}apply_proposal__mutmut_*",
    f"workspace_memory.turns.admission.x{SEP}Admission{SEP}authenticate__mutmut_*",
    f"workspace_memory.turns.admission.x{SEP}AdmissionService{SEP}_check_key_session__mutmut_*",
    f"workspace_memory.turns.admission.x{SEP}AdmissionService{SEP}_replay__mutmut_*",
    "workspace_memory.turns.admission.x__check_owner__mutmut_*",
    "workspace_memory.document.commit.x_version_changes__mutmut_*",
    f"workspace_memory.document.service.x{SEP}DocumentService{SEP}save__mutmut_*",
]
SCOPES = {"fence": FENCE, "modules": [f"workspace_memory.{m}.*" for m in MODULES]}

# mutmut's exit-code vocabulary (mutmut/stats.py).
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout"}
STATUS |= {-24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", -9: "segfault", -11: "segfault"}

CONFIG = """[mutmut]
source_paths=workspace_memory/
only_mutate=
{only}
pytest_add_cli_args_test_selection=
{tests}
also_copy=
    scripts/
    functions/
    workflows/
    template.yaml
do_not_mutate_patterns=
    ^\\s*raise \\w+\\(
"""


def stage() -> None:
    """A fresh copy of what the tests import, with the core package at the top; mutmut's state is kept."""
    STAGE.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ["workspace_memory", *COPIED]:
        target = STAGE / name
        if target.is_dir():
            shutil.rmtree(target)
        source = ROOT / "layers" / "core" / name if name == "workspace_memory" else ROOT / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=ignore)  # copy2: mtimes kept, so unchanged files stay cached
        else:
            shutil.copy2(source, target)
    only = "\n".join(f"    workspace_memory/{m.replace('.', '/')}.py" for m in MODULES)
    tests = "\n".join(f"    {t}" for t in TESTS)
    (STAGE / "setup.cfg").write_text(CONFIG.format(only=only, tests=tests))


def mutmut(*args: str, env: dict[str, str] | None = None) -> int:
    """Ctrl-C reaches mutmut too (same process group): it stops its workers and keeps what it has judged,
    so wait for it and report the mutants judged so far (a later run resumes)."""
    uv = Path(sys.executable).parent / "uv"
    command = [str(uv), "run", "--project", str(ROOT), "--no-sync", "--with", MUTMUT, "mutmut", *args]
    proc = subprocess.Popen(command, cwd=STAGE, env=env)
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            print("interrupted: waiting for mutmut to stop; the summary covers the mutants judged so far")


def results(globs: list[str]) -> dict[str, str]:
    """Status of every mutant in scope, read from mutmut's per-file metadata."""
    found: dict[str, str] = {}
    for module in MODULES:
        meta = STAGE / "mutants" / "workspace_memory" / f"{module.replace('.', '/')}.py.meta"
        if not meta.exists():
            continue
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            if any(fnmatch.fnmatch(name, g) for g in globs):
                found[name] = "not checked" if code is None else STATUS.get(code, "suspicious")
    return found


# -- curated guard mutants ------------------------------------------------------------------------------

SCRATCH = ROOT / ".local" / "guard-mutants"


def run_curated(env: dict[str, str], only: Sequence[str] = ()) -> int:
    """Each mutant in a fresh scratch copy of the tree; the working tree is never touched. With `only`, the
    mutants whose guard names contain one of its strings (case-insensitive)."""
    selected = [m for m in CURATED if not only or any(o.lower() in m.guard.lower() for o in only)]
    if not selected:
        print(f"no curated guard matches {list(only)}")
        return 1
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ["layers", *COPIED]:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, SCRATCH / name, ignore=ignore)
        else:
            shutil.copy2(source, SCRATCH / name)

    def pytest(tests: Sequence[str]) -> int:
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", *tests]
        return subprocess.run(command, cwd=SCRATCH, env=env, capture_output=True, text=True, check=False).returncode

    # Control: unmutated, every test set passes (else a failing fixture would pass for a kill).
    control = pytest(sorted({t for mutant in selected for t in mutant.tests}))
    if control != 0:
        print(f"the unmutated tests do not pass (pytest exit {control}): fix that first")
        return 1
    tally: Counter[str] = Counter()
    for mutant in selected:
        target = SCRATCH / mutant.path
        original = target.read_text()
        if original.count(mutant.old) != 1:
            status = "stale"
        else:
            target.write_text(original.replace(mutant.old, mutant.new))
            try:
                code = pytest(mutant.tests)
            finally:
                target.write_text(original)
            status = {0: "survived", 1: "killed"}.get(code, f"error (pytest exit {code})")
        tally[status] += 1
        print(f"{status:10s} {mutant.guard}", flush=True)
    print("curated guard mutants: " + ", ".join(f"{status} {n}" for status, n in sorted(tally.items())))
    return 0 if set(tally) == {"killed"} else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scope", choices=sorted(SCOPES), default="fence")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--show", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--curated", action="store_true", help="run the hand-written guard mutants instead")
    parser.add_argument(
        "--only", action="append", default=[], help="with --curated: the guards whose name contains this"
    )
    parser.add_argument("globs", nargs="*", help="mutant-name globs (replace the scope)")
    args = parser.parse_args()
    globs = args.globs or SCOPES[args.scope]

    log = Path(tempfile.mkdtemp(prefix="mutation-temporal-")) / "server.log"
    with LocalStack(StackConfig(temporal_log=log)) as servers:
        env = {**os.environ, "WM_TEST_MOTO_ENDPOINT": servers.moto(), "WM_TEST_TEMPORAL_ADDRESS": servers.temporal()}
        env["UV_PYTHON_DOWNLOADS"] = "never"
        # The mutants are in the test process's modules: its gateway runs the handlers in-process, from them
        # (an environment process would run the built artifact, unmutated).
        env["WM_TEST_GATEWAY_MODE"] = "threads"
        if args.curated:
            return run_curated(env, args.only)
        stage()
        mutmut("run", "--max-children", str(args.max_children), *globs, env=env)

    found = results(globs)
    tally = Counter(found.values())
    print()
    print("mutation score: " + ", ".join(f"{status} {n}" for status, n in sorted(tally.items())))
    judged = tally["killed"] + tally["survived"] + tally["timeout"]
    if judged:
        print(f"killed {tally['killed']} of {judged} judged ({100 * tally['killed'] / judged:.0f}%)")
    survivors = sorted(name for name, status in found.items() if status == "survived")
    for name in survivors:
        print(f"  survived: {name}")
        if args.show:
            mutmut("show", name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
