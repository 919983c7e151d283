"""`make invoke` (scripts/localstack/invoke.py) as a developer runs it against a running stack: here the test
session's, found by the ports `make dev` reads (MOTO_PORT, TEMPORAL_PORT) and the table by name. Each run is
a fresh execution environment from the built artifact; `SUB` puts a scene's real ids into an event.

Every event in events/ goes through the same runner in tests/integration/test_events.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest

from scripts.localstack.resources import LocalResources
from scripts.localstack.template import ROOT
from tests.support import Api, new_user

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAKE_TIMEOUT_SECONDS = 600


def make_invoke(resources: LocalResources, temporal_address: str, function: str, event: str, *sub: str) -> Any:
    """The function's response JSON that `make invoke` printed."""
    env = {
        **os.environ,
        "MOTO_PORT": str(urlsplit(resources.endpoint_url).port),
        "TEMPORAL_PORT": temporal_address.rpartition(":")[2],
    }
    command = ["make", "-s", "invoke", f"FUNCTION={function}", f"EVENT={event}", f"TABLE={resources.table_name}"]
    if sub:
        command.append(f"SUB={' '.join(sub)}")
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=MAKE_TIMEOUT_SECONDS, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    return json.loads("\n".join(lines[lines.index("{") :]))  # after the build's own lines


def test_make_invoke_prints_the_functions_response(resources: LocalResources, temporal_address: str) -> None:
    answer = make_invoke(resources, temporal_address, "WorkspacesFunction", "events/health.json")
    assert (answer["statusCode"], json.loads(answer["body"])) == (200, {"status": "ok"})


def test_make_invoke_substitutes_a_scenes_ids(api: Api, resources: LocalResources, temporal_address: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    content = f"# Memory\n- marker {uuid.uuid4().hex}\n"
    assert api.save(owner, ws, content, 0).status_code == 200
    answer = make_invoke(
        resources,
        temporal_address,
        "MemoryFunction",
        "events/memory-get.json",
        f"ws_events0000000000000000={ws}",
        f"user-owner={owner}",
    )
    assert answer["statusCode"] == 200, answer
    body = json.loads(answer["body"])
    assert (body["version"], body["content"], body["updatedBy"]) == (1, content, owner)


def test_make_invoke_runs_the_stream_event(resources: LocalResources, temporal_address: str) -> None:
    answer = make_invoke(resources, temporal_address, "ChangeFeedFunction", "events/change-feed-stream.json")
    assert answer == {"batchItemFailures": []}
