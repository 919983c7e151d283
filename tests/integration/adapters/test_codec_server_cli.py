"""`python -m workflows.codec_server` started without what it needs says what to set and exits, instead of a
traceback (missing settings) or a server whose every `/decode` is a 500 (no credentials)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.integration


def start(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    base.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    base.update(AWS_EC2_METADATA_DISABLED="true")  # no instance credentials looked for (no network)
    return subprocess.run(
        [sys.executable, "-m", "workflows.codec_server", "--port", "0"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, ["TABLE_NAME", "KMS_KEY_ID", "make dev"]),
        ({"TABLE_NAME": "workspace-memory", "KMS_KEY_ID": "alias/k"}, ["no AWS credentials", "make dev"]),
    ],
)
def test_a_codec_server_without_its_environment_says_what_to_set(
    env: dict[str, str], says: list[str], tmp_path: Path
) -> None:
    run = start(env, tmp_path)
    assert run.returncode == 2, run.stderr  # argparse's usage error, before it listens
    assert "READY" not in run.stdout
    assert "Traceback" not in run.stderr
    for words in says:
        assert words in run.stderr
