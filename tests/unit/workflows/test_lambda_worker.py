"""The Lambda turn worker (workflows/lambda_worker.py): importing it connects to nothing, and each invocation
runs the production worker - task queue, workflow, activities, KMS payload codec, versioning - on a client
it connects to only then. Invocations go through the contrib's own handler with its connect and
worker-construction dependencies replaced, so no socket is opened."""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from temporalio import activity
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.contrib.aws.lambda_worker._run_worker import _run_worker_internal, _WorkerDeps
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes

from workflows.consolidation_workflow import WorkspaceConsolidationWorkflow
from workflows.deletion_workflow import WorkspaceDeletionWorkflow
from workflows.erasure_workflow import MemberErasureWorkflow
from workflows.export_workflow import WorkspaceExportWorkflow
from workflows.import_workflow import WorkspaceImportWorkflow
from workflows.liveness import HEARTBEAT_EVERY, STICKY_SCHEDULE_TO_START, Heartbeats
from workflows.tools import ToolName
from workflows.turn_workflow import AgentTurnWorkflow
from workflows.worker import activities_of
from workspace_memory.adapters.temporal_codec import KmsPayloadCodec

pytestmark = pytest.mark.unit

MODULE = "workflows.lambda_worker"
ENV = {
    "TABLE_NAME": "workspace-memory-table",
    "KMS_KEY_ID": "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555",
    "AWS_REGION": "us-east-1",
    "AUTOMATION_BASE_URL": "https://api.example.invalid",
    "AUTOMATION_AUTH": "dev:x",
    "MODEL_PROVIDER": "scripted",
    "TEMPORAL_ADDRESS": "temporal.example.invalid:7233",
    "TEMPORAL_NAMESPACE": "turns-ns",
    "TEMPORAL_TASK_QUEUE": "workspace-memory-turns",
    "TEMPORAL_BUILD_ID": "build-7",
    # What Lambda provides: the role's credentials in the environment, so resolving them needs no request
    # (with none, botocore would ask the instance metadata service while building a client).
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}
PRODUCTION_ACTIVITIES = [
    "model_round",
    *ToolName,
    "destroy_branch_key",
    "purge_batch",
    "delete_turn_histories",
    "erasure_step",
    "write_export_file",
    "finish_export",
    "apply_import_file",
    "finish_import",
    "consolidation_pairs",
    "judge_pair",
    "propose_consolidation",
    "finish_consolidation_run",
]


class FakeContext:
    aws_request_id = "req-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:turn-worker:3"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


class FakeWorker:
    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.executor_worked = False

    async def run(self) -> None:
        executor = self.kwargs["activity_executor"]
        self.executor_worked = executor.submit(lambda: 42).result(timeout=5) == 42


@dataclasses.dataclass
class Recorder:
    connects: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    workers: list[FakeWorker] = dataclasses.field(default_factory=list)

    async def connect(self, **kwargs: Any) -> Any:
        self.connects.append(kwargs)
        return object()

    def create_worker(self, client: Any, **kwargs: Any) -> Any:  # stands in for temporalio.worker.Worker
        worker = FakeWorker(kwargs)
        self.workers.append(worker)
        return worker

    def handler(self, module: ModuleType, configure: Any = None) -> Any:
        """The contrib's handler for the module's version and configure, with these fakes as its deps."""
        deps = _WorkerDeps(connect=self.connect, create_worker=self.create_worker, getenv=os.environ.get)
        return _run_worker_internal(module.VERSION, configure or module.configure, deps)


def _import_fresh() -> ModuleType:
    sys.modules.pop(MODULE, None)
    return importlib.import_module(MODULE)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    # Only ENV: nothing a local stack of the same process set (its WM_ flags, endpoints, clock file) may
    # leak in, whichever tests ran in this process before (pytest-xdist runs files in any order).
    for name in list(os.environ):
        if name.startswith(("TEMPORAL_", "AWS_", "AUTOMATION_", "WM_")) or name in ("TABLE_NAME", "KMS_KEY_ID"):
            monkeypatch.delenv(name)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))  # no temporal.toml there: env only
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))

    async def no_connect(*args: Any, **kwargs: Any) -> Client:
        raise AssertionError(f"Client.connect called outside an invocation: {args} {kwargs}")

    monkeypatch.setattr(Client, "connect", no_connect)
    yield monkeypatch
    sys.modules.pop(MODULE, None)


@pytest.fixture
def lambda_worker(env: pytest.MonkeyPatch) -> ModuleType:
    return _import_fresh()


def test_import_builds_the_handler_and_connects_nothing(lambda_worker: ModuleType) -> None:
    # Client.connect raises if called and sockets are disabled: getting here means the import connected
    # nothing. boto3 clients (KMS, and Bedrock with that provider) connect lazily, on first request.
    assert callable(lambda_worker.handler)
    version = lambda_worker.VERSION
    assert (version.deployment_name, version.build_id) == ("workspace-memory", "build-7")
    assert lambda_worker.SETTINGS.temporal_task_queue == "workspace-memory-turns"
    assert lambda_worker.SETTINGS.automation_auth == "dev:x"


def test_an_invocation_runs_the_production_worker(lambda_worker: ModuleType) -> None:
    recorder = Recorder()
    recorder.handler(lambda_worker)(None, FakeContext())

    (connect,) = recorder.connects
    assert connect["target_host"] == "temporal.example.invalid:7233"
    assert connect["namespace"] == "turns-ns"
    assert connect["identity"] == f"req-1@{FakeContext.invoked_function_arn}"
    assert "api_key" not in connect

    (worker,) = recorder.workers
    kwargs = worker.kwargs
    assert kwargs["task_queue"] == "workspace-memory-turns"
    assert kwargs["workflows"] == [
        AgentTurnWorkflow,
        WorkspaceDeletionWorkflow,
        MemberErasureWorkflow,
        WorkspaceExportWorkflow,
        WorkspaceImportWorkflow,
        WorkspaceConsolidationWorkflow,
    ]
    assert kwargs["activities"] == activities_of(lambda_worker.PARTS)
    names = [activity._Definition.must_from_callable(fn).name for fn in kwargs["activities"]]
    assert names == PRODUCTION_ACTIVITIES

    deployment = kwargs["deployment_config"]
    assert deployment.version == lambda_worker.VERSION
    assert deployment.use_worker_versioning is True
    assert deployment.default_versioning_behavior == VersioningBehavior.PINNED
    assert kwargs["disable_eager_activity_execution"] is True
    # The turn's activities have heartbeat timeouts: the Lambda worker beats as the long-running one does.
    assert [type(i) for i in kwargs["interceptors"]] == [Heartbeats]
    assert kwargs["max_heartbeat_throttle_interval"] == HEARTBEAT_EVERY
    assert kwargs["sticky_queue_schedule_to_start_timeout"] == STICKY_SCHEDULE_TO_START


def test_the_client_encrypts_payloads_with_the_kms_codec(lambda_worker: ModuleType) -> None:
    recorder = Recorder()
    recorder.handler(lambda_worker)(None, FakeContext())

    converter = recorder.connects[0]["data_converter"]
    assert isinstance(converter, DataConverter)
    assert converter is lambda_worker.PARTS.converter
    assert isinstance(converter.payload_codec, KmsPayloadCodec)
    assert converter.failure_converter_class is DefaultFailureConverterWithEncodedAttributes


def test_each_invocation_connects_and_gets_its_own_activity_threads(lambda_worker: ModuleType) -> None:
    recorder = Recorder()
    handler = recorder.handler(lambda_worker)
    handler(None, FakeContext())
    handler(None, FakeContext())

    assert len(recorder.connects) == 2
    first, second = (w.kwargs["activity_executor"] for w in recorder.workers)
    assert isinstance(first, ThreadPoolExecutor)
    assert first is not second
    assert all(w.executor_worked for w in recorder.workers)
    assert first._max_workers >= recorder.workers[0].kwargs["max_concurrent_activities"]
    with pytest.raises(RuntimeError):  # shut down once its invocation ended
        first.submit(lambda: None)


def test_an_api_key_is_read_per_invocation_and_sent_over_tls(lambda_worker: ModuleType) -> None:
    keys = iter(["key-1", "key-2"])
    configure = lambda_worker.make_configure(lambda_worker.SETTINGS, lambda_worker.PARTS, lambda: next(keys))
    recorder = Recorder()
    handler = recorder.handler(lambda_worker, configure)
    handler(None, FakeContext())
    handler(None, FakeContext())

    assert [(c["api_key"], c["tls"]) for c in recorder.connects] == [("key-1", True), ("key-2", True)]


def test_secret_api_key_reads_the_secret_string(lambda_worker: ModuleType) -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:temporal-api-key-AbCdEf"
    client = boto3.session.Session(
        region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    ).client("secretsmanager")
    with Stubber(client) as stub:
        stub.add_response("get_secret_value", {"SecretString": "tmprl-key\n"}, {"SecretId": arn})
        stub.add_response("get_secret_value", {"SecretString": " "}, {"SecretId": arn})
        read = lambda_worker.secret_api_key(client, arn)
        assert read() == "tmprl-key"
        with pytest.raises(ValueError, match="empty"):
            read()
        stub.assert_no_pending_responses()


def test_the_secret_arn_variable_switches_the_api_key_on(env: pytest.MonkeyPatch) -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbCdEf"
    env.setenv("TEMPORAL_API_KEY_SECRET_ARN", arn)
    module = _import_fresh()  # builds a Secrets Manager client, and sends nothing
    assert callable(module._secret_api_key_from({"TEMPORAL_API_KEY_SECRET_ARN": arn}, "us-east-1"))
    assert module._secret_api_key_from({}, "us-east-1") is None


def test_the_build_id_is_required(lambda_worker: ModuleType) -> None:
    with pytest.raises(ValueError, match="TEMPORAL_BUILD_ID"):
        lambda_worker.deployment_version({})
    assert lambda_worker.deployment_version(
        {"TEMPORAL_BUILD_ID": " b2 ", "TEMPORAL_DEPLOYMENT_NAME": "wm-staging"}
    ) == WorkerDeploymentVersion(deployment_name="wm-staging", build_id="b2")


def test_cold_start_validates_settings(env: pytest.MonkeyPatch) -> None:
    env.delenv("AUTOMATION_BASE_URL")
    with pytest.raises(ValueError, match="AUTOMATION_BASE_URL"):
        _import_fresh()
