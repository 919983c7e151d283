"""The telemetry every function runs inside (bootstrap.instrumented) and what the local stack gives it: tracing
off where no X-Ray daemon listens, the EMF sink installed from the template's namespace, `make dev` saying
where logs, metrics and traces go (docs/operations.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.localstack.__main__ import telemetry_lines
from scripts.localstack.functions import declared_names, function_specs, stack_environment
from scripts.localstack.resources import LocalResources
from scripts.localstack.template import load_template
from workspace_memory import bootstrap
from workspace_memory.adapters.emf_metrics import EmfMetrics
from workspace_memory.kernel import metrics

pytestmark = pytest.mark.unit

IN_LAMBDA = {"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_SERVICE_NAME": "workspace-memory"}


@pytest.fixture(autouse=True)
def no_sink() -> Iterator[None]:
    yield
    metrics.install(None)


def test_every_local_function_runs_with_tracing_off() -> None:
    template = load_template()
    resources = LocalResources("http://127.0.0.1:5000", "t", "arn:aws:kms:us-east-1:0:key/k", "keys")
    stack = stack_environment(resources, "127.0.0.1:7233", "default", "q")
    specs = function_specs(template, None)
    for spec in specs.values():
        env = spec.environment(stack, declared_names(specs))
        assert env["POWERTOOLS_TRACE_DISABLED"] == "true", spec.logical_id
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "WorkspaceMemory", spec.logical_id
        assert env["LAMBDA_TASK_ROOT"], "powertools would trace: only the flag turns it off"
        assert not bootstrap.tracing_on(env), spec.logical_id


@pytest.mark.parametrize(
    ("env", "on"),
    [
        (IN_LAMBDA, True),
        ({**IN_LAMBDA, "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({**IN_LAMBDA, "AWS_SAM_LOCAL": "true"}, False),
        ({"POWERTOOLS_SERVICE_NAME": "workspace-memory"}, False),
    ],
)
def test_tracing_is_on_in_lambda_only(env: dict[str, str], on: bool) -> None:
    assert bootstrap.tracing_on(env) is on


def test_the_sink_is_installed_from_the_namespace_and_no_tracer_is_built_while_tracing_is_off() -> None:
    xray_loaded = "aws_xray_sdk.core" in sys.modules
    env = {**IN_LAMBDA, "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "WorkspaceMemory"}
    telemetry = bootstrap.build_telemetry(env)
    assert telemetry.tracer is None
    assert isinstance(metrics._installed[0], EmfMetrics)
    assert ("aws_xray_sdk.core" in sys.modules) == xray_loaded, "tracing off imports no X-Ray SDK"


@pytest.mark.parametrize(
    "env", [{"POWERTOOLS_METRICS_NAMESPACE": "WorkspaceMemory", "POWERTOOLS_METRICS_DISABLED": "true"}, {}]
)
def test_no_sink_when_metrics_are_disabled_or_outside_a_function(env: dict[str, str]) -> None:
    metrics.install(EmfMetrics("x", "y"))
    bootstrap.build_telemetry(env)
    assert metrics._installed == []


def test_a_namespace_cloudwatch_would_refuse_fails_at_the_first_invocation() -> None:
    with pytest.raises(ValueError, match="POWERTOOLS_METRICS_NAMESPACE"):
        bootstrap.build_telemetry({"POWERTOOLS_METRICS_NAMESPACE": "has spaces"})


def test_make_dev_says_where_logs_metrics_and_traces_go(tmp_path: Path) -> None:
    lines = "\n".join(telemetry_lines(tmp_path / "functions.log", load_template()))
    assert str(tmp_path / "functions.log") in lines
    assert "CloudWatch WorkspaceMemory" in lines
    assert "POWERTOOLS_TRACE_DISABLED=true" in lines
    assert "ApiAccessLogGroup" in lines
    assert "stderr" in "\n".join(telemetry_lines(None, load_template()))


class RecordingTracer:
    def __init__(self) -> None:
        self.options: dict[str, object] = {}

    def capture_lambda_handler(self, handler: object, **options: object) -> object:
        self.options = options
        return handler


def test_a_trace_holds_neither_the_response_nor_an_errors_message() -> None:
    """powertools records both by default: a response is a document's or an entry's text."""
    tracer = RecordingTracer()
    bootstrap.Telemetry(tracer).around(lambda event, context: event)
    assert tracer.options == {"capture_response": False, "capture_error": False}
    assert bootstrap.TRACED_MODULES == ("botocore",), "an HTTP client's subsegment records the URL with `q`"
