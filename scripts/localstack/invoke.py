"""`make invoke FUNCTION=<logical id> EVENT=events/<file>.json`: `sam local invoke` without Docker.

Runs one function of the template from the built artifact in a fresh execution environment process (the
runner the local gateway uses: scripts/localstack/runtime.py), against the running local stack (`make dev`):
its moto server at MOTO_PORT (5000) and its Temporal at TEMPORAL_PORT (7233), TEMPORAL_NAMESPACE and
TEMPORAL_TASK_QUEUE as `make dev` reads them; the table (`--table`, default `workspace-memory`), its
branch-key store and bus by name, the newest local KMS key. Prints the function's response JSON (exit 0), or
its error type (exit 1; the traceback is in the function's log, on stderr).

The events use fixed ids (events/README.md); `--sub OLD=NEW` (repeatable; `SUB="OLD=NEW ..."` for make)
replaces every occurrence of OLD in the event's text before it is sent, so an event can name the workspace,
key session, admission or credential of a scene of your own:

    make invoke FUNCTION=MemoryFunction EVENT=events/memory-get.json \\
        SUB="ws_events0000000000000000=$WS user-owner=alice"
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scripts.localstack.environments import InitError, Invocation, Launcher
from scripts.localstack.functions import function_specs, stack_environment
from scripts.localstack.gateway import built_artifact
from scripts.localstack.pool import context_for
from scripts.localstack.resources import discover, isolate_environment
from scripts.localstack.stack import StackConfig
from scripts.localstack.template import load_template


def invoke(
    function: str, event: dict[str, Any], environment: Mapping[str, str], *, build: Path | None = None
) -> Invocation:
    """`event` through `function` in a fresh execution environment with the local stack's `environment`
    (`LocalStack.environment()`, or `running_stack_environment()`); the environment is stopped after."""
    specs = function_specs(load_template(), build or built_artifact())
    if function not in specs:
        raise ValueError(f"no function {function!r} in template.yaml: one of {', '.join(sorted(specs))}")
    spec = specs[function]
    launcher = Launcher(specs, environment)
    try:
        try:
            started = launcher(spec)
        except InitError:
            return Invocation("init_error")
        try:
            return started.invoke(event, context_for(spec, str(uuid.uuid4())), spec.allowed_seconds)
        finally:
            started.close()
    finally:
        launcher.close()


def running_stack_environment(env: Mapping[str, str], table: str) -> dict[str, str]:
    """The environment of the local stack `make dev` runs with `env`'s ports and names."""
    config = StackConfig.from_environ(env)
    resources = discover(f"http://{config.host}:{config.moto_port}", table)
    address = f"{config.host}:{config.temporal_port}"
    return stack_environment(resources, address, config.namespace, config.task_queue)


def substituted(text: str, pairs: Sequence[str]) -> str:
    """`text` with each `OLD=NEW` of `pairs` applied, NEW escaped as JSON string content."""
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old:
            raise ValueError(f"--sub takes OLD=NEW, not {pair!r}")
        text = text.replace(old, json.dumps(new)[1:-1])
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("function", help="the function's logical id in template.yaml (MemoryFunction, ...)")
    parser.add_argument("event", type=Path, help="the event file (events/<file>.json)")
    parser.add_argument("--sub", action="append", default=[], metavar="OLD=NEW", help="replace OLD in the event")
    parser.add_argument("--table", default="workspace-memory", help="the stack's table (workspace-memory)")
    args = parser.parse_args(argv)
    isolate_environment()
    try:
        event = json.loads(substituted(args.event.read_text(encoding="utf-8"), args.sub))
        environment = running_stack_environment(os.environ, args.table)
        invocation = invoke(args.function, event, environment)
    except (OSError, ValueError, LookupError) as exc:
        print(f"make invoke: {exc}", file=sys.stderr)
        return 2
    if invocation.kind != "result":
        print(json.dumps({"errorType": invocation.error_type or invocation.kind}), flush=True)
        return 1
    print(json.dumps(invocation.payload, indent=2, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
