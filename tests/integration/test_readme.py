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


def test_readme_examples_work_as_written(gateway_url: str, settings: Settings) -> None:
    script = "set -euo pipefail\n" + readme_block()
    with running_worker(worker_settings(settings, gateway_url)):
        run = subprocess.run(
            ["bash", "-c", script],
            env={**os.environ, "API": gateway_url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert '"status":"ok"' in out
    assert '"code":"STALE_BASE_VERSION"' in out
    assert '"currentVersion":2' in out
    assert '"restoredFrom":1' in out
    assert '"status":"ok","revision":3' in out  # recall saw the undone text at version 3
    assert '"memoryWrite":"commit"' in out  # the key session grants memory:write, the policy is auto
    assert '"outcome":"committed","version":4' in out
    assert '{"mode":"auto","policyRevision":1,"clearGeneration":1}' in out
    assert '"nextCursor":null' in out  # the receipts fit on one page
    assert re.search(r'"turnId":"turn-[0-9a-f]{32}","status":"(running|completed)"', out)
    assert "error" not in out.replace('"error":{"code":"STALE_BASE_VERSION"', "")
