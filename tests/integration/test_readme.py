"""The README's curl walkthrough, run verbatim against a live local stack."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.integration.turn_support import running_worker, worker_settings
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_block() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- readme-examples:start -->\n```bash\n(.*?)```\n<!-- readme-examples:end -->", text, re.S)
    assert found, "README lost its examples block"
    return found.group(1)


def test_readme_examples_work_as_written_twice_in_a_row(gateway_url: str, settings: Settings) -> None:
    """The block makes fresh ids each run, so a reader can run it again on the same stack; it waits for its
    turn, so the last answer is the completed turn, not `running`."""
    script = "set -euo pipefail\n" + readme_block()
    with running_worker(worker_settings(settings, gateway_url)):
        runs = [
            subprocess.run(
                ["bash", "-c", script],
                env={**os.environ, "API": gateway_url},
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            for _ in range(2)
        ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.stderr == ""
        out = run.stdout
        lines = out.splitlines()
        assert lines[0] == '{"status":"ok"}'
        assert all(line.startswith("{") and line.endswith("}") for line in lines), out  # one answer per line
        assert '"code":"STALE_BASE_VERSION"' in out
        assert '"currentVersion":2' in out
        assert '"restoredFrom":1' in out
        assert '"status":"ok","revision":3' in out  # recall saw the undone text at version 3
        assert '"memoryWrite":"commit"' in out  # the key session grants memory:write, the policy is auto
        assert '"outcome":"committed","version":4' in out
        assert '{"mode":"auto","policyRevision":1,"clearGeneration":1}' in out
        assert '"nextCursor":null' in out  # the receipts fit on one page
        assert re.fullmatch(r'\{"turnId":"turn-[0-9a-f]{32}","status":"completed".*', lines[-1])
        assert "ask Bob about the release" in lines[-1]  # the answer read the working note the turn wrote
        assert "error" not in out.replace('"error":{"code":"STALE_BASE_VERSION"', "")
    first, second = (run.stdout.splitlines()[-1][:50] for run in runs)
    assert first != second  # the second run started a turn of its own, not a resend of the first
