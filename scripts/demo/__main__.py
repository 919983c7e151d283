"""`make demo` (`python -m scripts.demo`): the scenario against the stack serving $API, or one started here."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from scripts.demo.scenario import HOST, StackInfo, scenario
from scripts.demo.transcript import DemoFailure, Http
from scripts.localstack.client import DevClient
from scripts.localstack.processes import Interrupted, StartError
from scripts.localstack.resources import isolate_environment
from scripts.localstack.signals import signals_set
from scripts.localstack.stack import LocalStack, StackConfig

HTTP_TIMEOUT_SECONDS = 30.0


def api_url() -> str:
    explicit = os.environ.get("API", "").strip()
    if explicit:
        return explicit.rstrip("/")
    return f"http://{HOST}:{os.environ.get('GATEWAY_PORT', '3000').strip() or '3000'}"


def workflows_ui(ui: str | None) -> str:
    namespace = os.environ.get("TEMPORAL_NAMESPACE", "default")
    return f"{ui}/namespaces/{namespace}/workflows" if ui else "off (TEMPORAL_UI_PORT=off)"


def stack_config(api: str) -> StackConfig:
    """`make dev`'s settings from our environment; the gateway's port follows an explicit loopback `API`.
    The handlers log only warnings, so their lines do not interleave with the transcript."""
    config = StackConfig.from_environ(os.environ)
    gateway_port = config.gateway_port
    if os.environ.get("API", "").strip():
        parsed = urllib.parse.urlsplit(api)
        if parsed.hostname not in (HOST, "localhost") or parsed.port is None:
            raise DemoFailure(f"no API answers at {api}; unset API to let the demo start a local stack")
        gateway_port = parsed.port
    quiet = {**config.handler_environment, "POWERTOOLS_LOG_LEVEL": "WARNING"}
    return dataclasses.replace(config, gateway_port=gateway_port, handler_environment=quiet)


def _terminate(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through the stack's exit, which stops what it started


@contextmanager
def local_stack(client: DevClient) -> Iterator[StackInfo]:
    """Uses the stack serving the client's API, or starts one in this process, stopped on exit."""
    api = client.base
    if client.healthy():
        print(f"using the stack already serving {api}", flush=True)
        ui = os.environ.get("TEMPORAL_UI_PORT", "8233").strip()
        yield StackInfo(workflows_ui(None if ui.lower() == "off" else f"http://{HOST}:{ui}"), started=False)
        return
    config = stack_config(api)
    print(f"no API at {api}: starting the local stack in this process", flush=True)
    previous = signal.signal(signal.SIGTERM, _terminate)
    stopping = threading.Event()
    try:
        with LocalStack(config, cancel=stopping) as stack:
            with signals_set(stopping):  # a signal while starting stops what started, at a safe point
                stack.up(worker="thread")
            stack.checkpoint()
            # The first request cold-starts the handler (imports, clients): on a busy machine that takes seconds.
            if not client.healthy(timeout=HTTP_TIMEOUT_SECONDS):
                raise DemoFailure(f"the stack is ready but {api}/v1/health does not answer 200")
            ui = workflows_ui(stack.temporal_ui)
            print(f"stack ready: API {api}, Temporal UI {ui}", flush=True)
            yield StackInfo(ui, started=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        print("\nlocal stack stopped", flush=True)


def main() -> int:
    isolate_environment()
    client = DevClient(api_url(), timeout=HTTP_TIMEOUT_SECONDS)
    try:
        with local_stack(client) as stack:
            scenario(Http(client), stack)
    except (DemoFailure, StartError) as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    except (KeyboardInterrupt, Interrupted):
        print("\ninterrupted", file=sys.stderr, flush=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
