"""The artifact `sam build` made (the one `sam deploy` ships) holds everything the code imports, compiled for
the template's architecture, within Lambda's size limit: each function's handler is imported by the
template's runtime interpreter from the built code and layer alone, with the project's venv nowhere on the
path, and every module it loads comes from the artifact or the interpreter's standard library."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from scripts.artifact import build, layer
from scripts.localstack.template import load_template

pytestmark = pytest.mark.integration

PROBE = r"""
import importlib, json, pkgutil, sys
code, site, handler = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [code, site]
module_name, _, attr = handler.rpartition(".")
module = importlib.import_module(module_name)
assert callable(getattr(module, attr))
import workspace_memory
for info in pkgutil.walk_packages(workspace_memory.__path__, "workspace_memory."):
    importlib.import_module(info.name)
files = sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})
print(json.dumps({"files": files, "stdlib": sys.base_prefix, "version": list(sys.version_info[:2])}))
"""


@pytest.fixture(scope="module")
def artifact() -> Path:
    """The deploy build, made now unless `make test` already made it from these very inputs."""
    return build.build("deploy")


def _functions() -> dict[str, dict[str, str]]:
    resources = load_template()["Resources"]
    return {
        name: resource["Properties"]
        for name, resource in resources.items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def test_every_compiled_file_is_built_for_the_template_architecture(artifact: Path) -> None:
    compiled = layer.compiled_files(layer.site_packages(artifact))
    assert len(compiled) > 10  # pydantic-core, cryptography, temporalio's bridge, numpy, ...
    wrong = [f"{c.path}: {c.machine}" for c in compiled if c.machine != build.deploy_arch()]
    assert wrong == []


def test_each_function_with_the_layer_fits_lambdas_unzipped_limit(artifact: Path) -> None:
    layer_bytes = layer.size(artifact / "CoreLayer")
    for name in _functions():
        total = layer_bytes + layer.size(artifact / name)
        assert total < layer.LAMBDA_UNZIPPED_LIMIT, (name, total)


def test_nothing_prunable_is_left_in_the_layer(artifact: Path) -> None:
    assert layer.prunable(layer.site_packages(artifact)) == []


@pytest.mark.parametrize("function", sorted(_functions()))
def test_each_handler_imports_from_the_artifact_alone(artifact: Path, function: str) -> None:
    handler = _functions()[function]["Handler"]
    code, site = artifact / function, layer.site_packages(artifact)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LANG": "C.UTF-8",
        "AWS_DEFAULT_REGION": "us-east-1",
        "TABLE_NAME": "wm-import-probe",
        "KEY_STORE_TABLE_NAME": "wm-import-probe-keys",
        "KMS_KEY_ID": "import-probe",
        "AUTOMATION_BASE_URL": "http://127.0.0.1:9",  # the worker builds its parts at import; it opens no socket
        "AUTOMATION_AUTH": "iam",
        "AWS_ACCESS_KEY_ID": "testing",  # fake, as Lambda gives the role's: nothing here can reach AWS
        "AWS_SECRET_ACCESS_KEY": "testing",
        "TEMPORAL_DEPLOYMENT_NAME": "workspace-memory",
        "TEMPORAL_BUILD_ID": "import-probe",
    }
    result = subprocess.run(  # -B: Lambda's code directory is read-only, so nothing writes bytecode into it
        [build.python313(), "-I", "-S", "-B", "-c", PROBE, str(code), str(site), handler],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["version"] == [3, 13]
    outside = [f for f in probe["files"] if not f.startswith((str(artifact), probe["stdlib"]))]
    assert outside == []
