"""A handler module's import pays only for its routes and wire models: no service, AWS client, encryption SDK
or Temporal client is imported until the first request builds the services (measured by `make bench`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scripts.bench.cold_start import handler_modules

pytestmark = pytest.mark.unit

DEFERRED = (  # powertools itself imports botocore's bare package (0.5 ms) for its user agent: not listed
    "boto3",
    "botocore.session",
    "aws_encryption_sdk",
    "temporalio.client",
    "workspace_memory.turns.capture",
    "workspace_memory.document.service",
    "workspace_memory.turns.recall",
    "workspace_memory.turns.admission",
    "workspace_memory.turns.notes",
    "workspace_memory.adapters.dynamo",
    "workspace_memory.store.changes",  # the item layouts: the audit page's bounds once pulled them in (35 ms)
    "workspace_memory.governance.audit",
    "aws_lambda_powertools.event_handler.openapi.models",  # only the Swagger page builds them (37 ms)
    "detect_secrets",  # redaction's detectors: imported on the first text they look at
    "phonenumbers",
    "stdnum",
    "aws_xray_sdk",  # the Tracer's provider: built at the first invocation, tracing on (bootstrap.instrumented)
)


@pytest.mark.parametrize("module", handler_modules())
def test_importing_a_handler_defers_the_services_and_their_clients(module: str) -> None:
    probe = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    loaded = set(json.loads(out.stdout))
    assert [name for name in DEFERRED if name in loaded] == []
