"""One Lambda execution environment, as a process of its own: the runner the local gateway and `make invoke`
start for a function (`python3.13 -I -S -u runtime.py <code dir> <layer dir> <handler> <parent pid>`).

Why a process: a handler keeps per-request state in places shared by the whole interpreter (powertools keeps
the current event on the resolver *class*), so two requests in one interpreter can answer as each other.
Lambda runs one request at a time per environment, each in its own sandbox; so does this.

Standard library only, like Lambda's own bootstrap: `-I -S` keeps the project's venv out, and `sys.path` is
the function's code directory, then the layer's import root (Lambda's /var/task and /opt/python), then the
interpreter's standard library. The protocol is length-prefixed JSON (`frame`) on the pipes the parent gave as
stdin (requests) and stdout (answers); the runner takes both and points fd 1 at fd 2, so whatever the handler
prints goes to the log, never into the protocol. EOF on the request pipe (the parent stopped or died) ends it;
on Linux it also asks the kernel for SIGKILL when the parent dies (PR_SET_PDEATHSIG), in case a handler is
stuck and never reads again.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import select
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

HEADER = struct.Struct(">I")
MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
"""Lambda's quota for a synchronous invocation's request and response payloads (6 MB)."""
MAX_FRAME_BYTES = 4 * MAX_PAYLOAD_BYTES
"""What either side reads at most in one frame: a 6 MB payload in JSON, escaped, with its envelope."""
PR_SET_PDEATHSIG = 1

Handler = Callable[[dict[str, Any], Any], Any]


class ProtocolError(RuntimeError):
    """The other side broke the framing (EOF inside a frame, a frame over the limit, not JSON)."""


class FrameTimeout(TimeoutError):
    """No whole frame arrived before the deadline."""


@dataclass
class LambdaContext:
    """The attributes a Lambda context carries (what powertools and the handlers read). `deadline_ms` is the
    epoch milliseconds the invocation must end by, as Lambda's runtime API hands it over."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:local"
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"
    function_version: str = "$LATEST"
    deadline_ms: int = 0
    identity: None = None
    client_context: None = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - int(time.time() * 1000))

    def wire(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("identity", "client_context")}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> LambdaContext:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def encode(message: Mapping[str, Any]) -> bytes:
    data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return HEADER.pack(len(data)) + data


def write_frame(fd: int, data: bytes) -> None:
    """Writes a whole encoded frame (os.write may take less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class FrameReader:
    """Reads frames off a file descriptor, with an optional deadline (`time.monotonic()`)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def read(self, deadline: float | None = None) -> dict[str, Any] | None:
        """The next frame, or None on EOF between frames."""
        header = self._take(HEADER.size, deadline, eof_ok=True)
        if header is None:
            return None
        (size,) = HEADER.unpack(header)
        if size > MAX_FRAME_BYTES:
            raise ProtocolError(f"a frame of {size} bytes, over {MAX_FRAME_BYTES}")
        body = self._take(size, deadline, eof_ok=False)
        try:
            message = json.loads(body or b"")
        except ValueError as exc:
            raise ProtocolError("a frame that is not JSON") from exc
        if not isinstance(message, dict):
            raise ProtocolError("a frame that is not a JSON object")
        return message

    def _take(self, size: int, deadline: float | None, *, eof_ok: bool) -> bytes | None:
        while len(self._buffer) < size:  # each turn reads at least one byte, or ends
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._poll.poll(max(1, int(remaining * 1000))):
                    raise FrameTimeout
            chunk = os.read(self._fd, max(65536, size - len(self._buffer)))
            if not chunk:
                if eof_ok and not self._buffer:
                    return None
                raise ProtocolError("EOF inside a frame")
            self._buffer += chunk
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken


def error_of(exc: BaseException) -> dict[str, Any]:
    """An error as Lambda reports one: type, message, stack (the message goes only to the log)."""
    return {
        "errorType": type(exc).__name__,
        "errorMessage": str(exc),
        "stackTrace": traceback.format_exception(exc),
    }


def answer(handler: Handler, request: Mapping[str, Any]) -> bytes:
    """Runs one invocation; the encoded frame of its result or of its error (as Lambda names them)."""
    context = LambdaContext.from_wire(request["context"])
    try:
        payload = handler(request["event"], context)
    except Exception as exc:
        traceback.print_exc()  # Lambda logs an unhandled error too
        return encode({"type": "error", **error_of(exc)})
    try:
        frame = encode({"type": "result", "payload": payload})
    except (TypeError, ValueError) as exc:
        return encode({"type": "error", **error_of(exc), "errorType": "Runtime.MarshalError"})
    if len(frame) - HEADER.size > MAX_PAYLOAD_BYTES:
        too_large = {"errorType": "Function.ResponseSizeTooLarge", "errorMessage": f"over {MAX_PAYLOAD_BYTES} bytes"}
        return encode({"type": "error", **too_large})
    return frame


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent dies (Linux), and now if it is gone already (the race before the call)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        os._exit(1)


def load_handler(spec: str) -> Handler:
    """`module.attr` (`app.handler`, `workflows.lambda_worker.handler`) from `sys.path`."""
    module_name, _, attr = spec.rpartition(".")
    handler: Handler = getattr(importlib.import_module(module_name), attr)
    return handler


def take_protocol_pipes() -> tuple[int, int]:
    """The request and answer pipes (fds 0 and 1, duplicated); fd 1 then goes to the log (fd 2) and fd 0 reads
    nothing, so neither a print nor an input() can touch the protocol."""
    requests, answers = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return requests, answers


def main(argv: list[str]) -> int:
    code_dir, layer_dir, handler_spec, parent = argv
    die_with_parent(int(parent))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the stack's to handle, in order
    requests, answers = take_protocol_pipes()
    sys.path[:0] = [code_dir, layer_dir]
    started = time.monotonic()
    try:
        handler = load_handler(handler_spec)
    except Exception as exc:
        traceback.print_exc()
        write_frame(answers, encode({"type": "initError", **error_of(exc)}))
        return 1
    write_frame(answers, encode({"type": "ready", "initMs": (time.monotonic() - started) * 1000}))
    reader = FrameReader(requests)
    while (request := reader.read()) is not None:  # until the parent closes the pipe
        write_frame(answers, answer(handler, request))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
