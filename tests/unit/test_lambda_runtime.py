"""The local Lambda model's pure parts: the environment protocol's frames, what a function's environment holds,
what the gateway answers when a function gives no answer, the Content-Length rule, and the local clock's
guard (honoured on the local stack only)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.localstack.environments import Invocation
from scripts.localstack.functions import FunctionSpec, declared_names, function_specs
from scripts.localstack.gateway import _content_length
from scripts.localstack.routing import http_response
from scripts.localstack.runtime import (
    HEADER,
    MAX_FRAME_BYTES,
    FrameReader,
    FrameTimeout,
    LambdaContext,
    ProtocolError,
    answer,
    encode,
    write_frame,
)
from scripts.localstack.template import load_template
from workspace_memory.kernel.clock import FileClock
from workspace_memory.kernel.settings import LOCAL_CLOCK_FILE, LOCAL_STACK_FLAG, Settings, SettingsError

pytestmark = pytest.mark.unit


@pytest.fixture
def pipe() -> Iterator[tuple[FrameReader, int]]:
    read, write = os.pipe()
    try:
        yield FrameReader(read), write
    finally:
        for fd in (read, write):
            with contextlib.suppress(OSError):  # a test may have closed it
                os.close(fd)


def test_frames_round_trip_and_eof_between_frames_ends_the_stream(pipe: tuple[FrameReader, int]) -> None:
    reader, write = pipe
    write_frame(write, encode({"event": {"text": "é"}, "n": 1}))
    write_frame(write, encode({"n": 2}))
    os.close(write)
    assert reader.read() == {"event": {"text": "é"}, "n": 1}
    assert reader.read() == {"n": 2}
    assert reader.read() is None


def test_eof_inside_a_frame_or_a_frame_over_the_limit_breaks_the_protocol(pipe: tuple[FrameReader, int]) -> None:
    reader, write = pipe
    os.write(write, HEADER.pack(MAX_FRAME_BYTES + 1))
    with pytest.raises(ProtocolError):
        reader.read()
    truncated, other = os.pipe()
    os.write(other, encode({"n": 1})[:-1])
    os.close(other)
    with pytest.raises(ProtocolError):
        FrameReader(truncated).read()
    os.close(truncated)


def test_no_frame_before_the_deadline_is_a_timeout(pipe: tuple[FrameReader, int]) -> None:
    reader, _ = pipe
    with pytest.raises(FrameTimeout):
        reader.read(time.monotonic())


def test_the_runner_answers_results_errors_and_what_json_cannot_carry() -> None:
    context = LambdaContext("Fn", "r-1", deadline_ms=int(time.time() * 1000) + 5000).wire()

    def run(handler: object) -> dict[str, object]:
        frame = answer(handler, {"event": {"n": 1}, "context": context})  # type: ignore[arg-type]
        decoded: dict[str, object] = json.loads(frame[HEADER.size :])
        return decoded

    assert run(lambda event, ctx: {"n": event["n"], "fn": ctx.function_name}) == {
        "type": "result",
        "payload": {"n": 1, "fn": "Fn"},
    }

    def boom(event: object, ctx: object) -> None:
        raise KeyError("secret")

    failed = run(boom)
    assert (failed["type"], failed["errorType"]) == ("error", "KeyError")
    assert run(lambda event, ctx: {"x": object()})["errorType"] == "Runtime.MarshalError"


def test_a_context_carries_its_deadline_across_the_pipe() -> None:
    context = LambdaContext("Fn", "r-1", memory_limit_in_mb=256, deadline_ms=int(time.time() * 1000) + 3000)
    again = LambdaContext.from_wire(json.loads(json.dumps(context.wire())))
    assert again == context
    assert 0 < again.get_remaining_time_in_millis() <= 3000


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [("error", 502, "FUNCTION_ERROR"), ("crash", 502, "FUNCTION_CRASHED"), ("timeout", 504, "FUNCTION_TIMEOUT")],
)
def test_a_function_without_an_answer_gets_an_envelope(kind: str, status: int, code: str) -> None:
    response = http_response(Invocation(kind))  # type: ignore[arg-type]
    assert response["statusCode"] == status
    assert json.loads(response["body"])["error"]["code"] == code


def test_a_payload_without_a_status_code_is_the_body_of_a_200() -> None:
    assert http_response(Invocation("result", {"statusCode": 201, "body": "x"})) == {"statusCode": 201, "body": "x"}
    assert http_response(Invocation("result", ["a"]))["statusCode"] == 200


@pytest.mark.parametrize(
    ("values", "length"),
    [
        *[(None, 0), (["0"], 0), (["17"], 17), ([" 5 "], 5)],
        *[(["-1"], None), (["abc"], None), (["1e3"], None), (["+5"], None), ([""], None), (["9" * 21], None)],
        *[(["5", "5"], None), (["5", "6"], None)],
    ],
)
def test_content_length_is_exactly_one_decimal_number(values: list[str] | None, length: int | None) -> None:
    assert _content_length(values) == length


def test_a_function_sees_what_the_template_declares_for_it_and_what_no_function_declares() -> None:
    spec = FunctionSpec(
        logical_id="Fn",
        handler="app.handler",
        runtime="python3.13",
        timeout=3.0,
        memory_mb=128,
        code_dir=Path("/code"),
        layer_dir=Path("/layer"),
        variables={"LITERAL": "template", "RESOLVED": None, "OVERRIDDEN": "template", "UNRESOLVED": None},
    )
    stack = {"RESOLVED": "stack", "OVERRIDDEN": "stack", "ELSEWHERE": "x", "AWS_REGION": "us-east-1"}
    env = spec.environment(stack, frozenset(spec.variables) | {"ELSEWHERE"})
    assert {k: env.get(k) for k in (*spec.variables, "ELSEWHERE", "AWS_REGION")} == {
        "LITERAL": "template",
        "RESOLVED": "stack",
        "OVERRIDDEN": "stack",
        "UNRESOLVED": None,
        "ELSEWHERE": None,  # another function's variable
        "AWS_REGION": "us-east-1",  # declared by no function: the runtime's
    }
    assert (env["AWS_LAMBDA_FUNCTION_NAME"], env["LAMBDA_TASK_ROOT"], env["_HANDLER"]) == ("Fn", "/code", "app.handler")


def test_the_templates_functions_get_their_globals_and_their_own_variables() -> None:
    specs = function_specs(load_template(), Path("/build"))
    feed, memory = specs["ChangeFeedFunction"], specs["MemoryFunction"]
    assert (feed.timeout, feed.memory_mb, memory.timeout, memory.memory_mb) == (60.0, 256, 15.0, 512)
    assert (memory.code_dir, memory.layer_dir) == (Path("/build/MemoryFunction"), Path("/build/CoreLayer/python"))
    assert memory.variables["TABLE_NAME"] is None  # !Ref MemoryTable: the stack's value
    assert memory.variables["POWERTOOLS_SERVICE_NAME"] == "workspace-memory"
    assert "CHANGE_FEED_BUS_NAME" in feed.variables
    assert "CHANGE_FEED_BUS_NAME" not in memory.variables
    assert "CHANGE_FEED_BUS_NAME" in declared_names(specs)


def _settings(env: dict[str, str]) -> Settings:
    return Settings.from_environ({"TABLE_NAME": "table", "KMS_KEY_ID": "key", **env})


def test_the_local_clock_is_honoured_only_on_the_local_stack(tmp_path: Path) -> None:
    clock = {LOCAL_CLOCK_FILE: str(tmp_path / "epoch")}
    local = _settings({**clock, LOCAL_STACK_FLAG: "1", "AWS_ENDPOINT_URL": "http://127.0.0.1:5000"})
    assert local.local_clock_file == str(tmp_path / "epoch")
    for refused in (
        {**clock, "AWS_ENDPOINT_URL": "http://127.0.0.1:5000"},  # no flag
        {**clock, LOCAL_STACK_FLAG: "1"},  # no endpoint: AWS itself
        {**clock, LOCAL_STACK_FLAG: "1", "AWS_ENDPOINT_URL": "https://dynamodb.us-east-1.amazonaws.com"},
    ):
        with pytest.raises(SettingsError, match=LOCAL_CLOCK_FILE):
            _settings(refused)


def test_the_file_clock_reads_the_pinned_epoch_while_there_is_one(tmp_path: Path) -> None:
    path = tmp_path / "epoch"
    clock = FileClock(str(path))
    assert abs(clock.now() - time.time()) < 60
    path.write_text("1800000000.5")
    assert clock.now() == 1800000000.5
    path.unlink()
    assert abs(clock.now() - time.time()) < 60
