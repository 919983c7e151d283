"""The turn worker as an AWS Lambda function (Temporal Serverless Worker).

Why it looks like this:

- `temporalio.contrib.aws.lambda_worker.run_worker` owns each invocation: it connects to Temporal, runs a
  worker with Lambda-sized limits, polls until shortly before the invocation deadline (the function timeout
  minus `shutdown_deadline_buffer`, 7 s by default), drains and returns. Nothing in this stack schedules
  the function: Temporal's Worker Controller invokes it, through an IAM role it assumes, when tasks wait on
  a Worker Deployment Version whose compute provider is this function (docs/deploy.md).
- Serverless workers are always versioned. The version is `TEMPORAL_DEPLOYMENT_NAME` / `TEMPORAL_BUILD_ID`
  (template parameters); turns are PINNED to the build they started on, so a deploy never needs workflow
  patching - old builds drain on their own Lambda version while new turns start on the current one.
- Everything not bound to an event loop is built once per cold start from the same pieces as the
  long-running worker (`workflows.worker`): `Settings`, the activities (automation API client, model
  provider) and the KMS payload-codec data converter. Importing this module opens no connection.
- Per invocation (`configure`, run inside that invocation's event loop): the thread pool of the synchronous
  activities and, when `TEMPORAL_API_KEY_SECRET_ARN` is set, the Temporal API key read from Secrets Manager
  (a rotated key is picked up by the next invocation; the key never sits in the function configuration).
- The connection (address, namespace, TLS, API key, gRPC metadata) comes from `temporalio.envconfig`: the
  `TEMPORAL_*` environment variables or a `temporal.toml` profile. Address and namespace fall back to
  `Settings`, which reads the same variables, so both workers resolve them identically.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.contrib.aws.lambda_worker import LambdaWorkerConfig, run_worker

from workflows.liveness import with_liveness
from workflows.worker import WORKFLOWS, WorkerParts, activities_of, build_worker_parts
from workspace_memory.bootstrap import instrumented
from workspace_memory.kernel.settings import Settings

DEFAULT_DEPLOYMENT_NAME = "workspace-memory"
DEFAULT_ACTIVITY_SLOTS = 2  # the contrib's Lambda default for max_concurrent_activities

ApiKeySource = Callable[[], str]
Configure = Callable[[LambdaWorkerConfig], AsyncGenerator[None, None]]


def deployment_version(env: Mapping[str, str]) -> WorkerDeploymentVersion:
    """The Worker Deployment Version this code is; it must match the version created in Temporal."""
    build_id = env.get("TEMPORAL_BUILD_ID", "").strip()
    if not build_id:
        raise ValueError("TEMPORAL_BUILD_ID is required: the Worker Deployment Version build id of this code")
    name = env.get("TEMPORAL_DEPLOYMENT_NAME", "").strip() or DEFAULT_DEPLOYMENT_NAME
    return WorkerDeploymentVersion(deployment_name=name, build_id=build_id)


def secret_api_key(client: Any, secret_arn: str) -> ApiKeySource:
    """Reads the Temporal API key (the secret's string) from Secrets Manager on each call."""

    def read() -> str:
        key = str(client.get_secret_value(SecretId=secret_arn)["SecretString"]).strip()
        if not key:
            raise ValueError("the Temporal API key secret is empty")
        return key

    return read


def _secret_api_key_from(env: Mapping[str, str], region: str) -> ApiKeySource | None:
    secret_arn = env.get("TEMPORAL_API_KEY_SECRET_ARN", "").strip()
    if not secret_arn:
        return None
    import boto3  # a client connects lazily: building it at cold start sends nothing

    return secret_api_key(boto3.session.Session(region_name=region).client("secretsmanager"), secret_arn)


def make_configure(settings: Settings, parts: WorkerParts, api_key: ApiKeySource | None = None) -> Configure:
    async def configure(config: LambdaWorkerConfig) -> AsyncGenerator[None, None]:
        connect = config.client_connect_config
        connect.setdefault("target_host", settings.temporal_address)
        connect.setdefault("namespace", settings.temporal_namespace)
        connect["data_converter"] = parts.converter
        if api_key is not None:
            connect["api_key"] = await asyncio.to_thread(api_key)
            connect.setdefault("tls", True)  # an API key is only ever sent over TLS

        worker = config.worker_config
        worker["task_queue"] = settings.temporal_task_queue
        worker["workflows"] = WORKFLOWS
        worker["activities"] = activities_of(parts)
        deployment = worker.get("deployment_config")
        if deployment is None:  # run_worker always sets it; guard against a contrib change
            raise RuntimeError("lambda_worker did not provide a deployment_config")
        worker["deployment_config"] = dataclasses.replace(
            deployment, default_versioning_behavior=VersioningBehavior.PINNED
        )
        slots = worker.get("max_concurrent_activities") or DEFAULT_ACTIVITY_SLOTS
        executor = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="turn-activity")
        worker["activity_executor"] = executor
        worker.update(with_liveness(worker))  # the turn's activities have heartbeat timeouts: beat here too
        try:
            yield  # the worker polls here
        finally:
            # The worker has drained (or hit the deadline); never block the invocation on a stuck thread.
            executor.shutdown(wait=False, cancel_futures=True)

    return configure


# Cold start: validated settings and the loop-independent pieces, shared by every invocation.
SETTINGS = Settings.from_environ(os.environ)
PARTS = build_worker_parts(SETTINGS)
VERSION = deployment_version(os.environ)
configure = make_configure(SETTINGS, PARTS, _secret_api_key_from(os.environ, SETTINGS.region))
handler = instrumented(run_worker(VERSION, configure))
