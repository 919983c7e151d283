"""`LocalStack`: the local stack as one context manager, for `make dev`, the test fixtures, the benchmark, the
demo and the history recorder.

Each piece starts when it is first asked for, after what it needs: `moto()` the moto server (DynamoDB + KMS,
serialized), `resources()` the table from template.yaml and a KMS key on it, `temporal()` the real Temporal
dev server, `gateway()` the local gateway in a thread, `worker_thread()` or `worker_process()` the turn worker;
`up()` starts them all in `make dev`'s order. Leaving the block stops everything that started, in reverse
order, also on error (SIGINT and SIGTERM are held off meanwhile, so a second Ctrl-C cannot leave it half
stopped), and restores the process environment.

The gateway runs each function from the built artifact in execution environment processes of its own, with
the environment the template gives that function on this stack (`environment()`): nothing of this process's
state reaches a handler. Loopback only: every server binds to 127.0.0.1, and the gateway and the moto server
refuse a non-loopback `Host`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from scripts.localstack.functions import stack_environment
from scripts.localstack.local_clock import PinnedClock, pinned
from scripts.localstack.processes import (
    HOST,
    Interrupted,
    Process,
    StartError,
    echo_worker_line,
    start_codec,
    start_moto,
    start_worker,
    stop,
)
from scripts.localstack.resources import LocalResources, provision
from scripts.localstack.signals import signals_held
from scripts.localstack.template import ROOT
from scripts.localstack.temporal import TemporalStartCancelled, free_port, start_temporal
from workspace_memory.kernel.settings import Settings

if TYPE_CHECKING:
    from scripts.localstack.environments import ColdStart
    from scripts.localstack.gateway import Gateway
    from workflows.worker import WorkerParts


@dataclass(frozen=True)
class StackConfig:
    """Where the pieces listen and what they hold. Port 0 (None for Temporal, which cannot pick its own):
    a free one. No UI port: Temporal runs headless; no DB file: its state stays in memory."""

    host: str = HOST
    moto_endpoint: str | None = None
    """A moto server already running (its URL) to use instead of starting one; never stopped here."""
    moto_port: int = 0
    gateway_port: int = 0
    temporal_address: str | None = None
    """A Temporal server already running (`host:port`) to use instead of starting one; never stopped here."""
    temporal_port: int | None = None
    temporal_ui_port: int | None = None
    temporal_db: Path | None = None
    """Deleted when the server starts: moto's table and key are new on every start, and histories left by
    an earlier run are encrypted under a key that no longer exists."""
    temporal_log: Path | None = None
    codec_port: int | None = None
    """The codec server `up()` starts (`workflows.codec_server`, so the UI and `temporal workflow show
    --codec-endpoint` read the encrypted histories); None: none."""
    table_name: str = "workspace-memory"
    namespace: str = "default"
    task_queue: str = "workspace-memory-turns"
    handler_environment: Mapping[str, str] = field(default_factory=dict)
    """Extra variables for the handlers and the worker process (say POWERTOOLS_LOG_LEVEL)."""
    worker_auth: str = "dev:worker"
    """The worker's AUTOMATION_AUTH: the gateway's dev credential for the IAM routes."""
    model_provider: str = "scripted"
    new_process_groups: bool = False
    """Children in process groups of their own: a terminal's Ctrl-C reaches only this process, which then
    stops them in order."""
    gateway_mode: Literal["processes", "threads"] = "processes"
    """`threads`: the old in-process handlers, for the benchmark only (scripts/localstack/inprocess.py)."""
    function_log: Path | None = None
    """Where the functions' output (their logs) is appended; None: this process's stderr."""

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> StackConfig:
        """`make dev`'s variables: MOTO_PORT (5000), GATEWAY_PORT (3000), TEMPORAL_PORT (7233),
        TEMPORAL_UI_PORT (8233, `off` for none), CODEC_PORT (8888, `off` for none), LOCAL_STATE_DIR (.local,
        below the repository unless absolute: temporal.db and temporal.log), TEMPORAL_NAMESPACE,
        TEMPORAL_TASK_QUEUE, AUTOMATION_AUTH (dev:worker) and MODEL_PROVIDER (scripted)."""
        ui, codec = env.get("TEMPORAL_UI_PORT", "8233").strip(), env.get("CODEC_PORT", "8888").strip()
        state = Path(env.get("LOCAL_STATE_DIR", ".local"))
        state = (state if state.is_absolute() else ROOT / state).resolve()
        return cls(
            moto_port=int(env.get("MOTO_PORT", "5000")),
            gateway_port=int(env.get("GATEWAY_PORT", "3000")),
            temporal_port=int(env.get("TEMPORAL_PORT", "7233")),
            temporal_ui_port=None if ui.lower() == "off" else int(ui),
            temporal_db=state / "temporal.db",
            temporal_log=state / "temporal.log",
            codec_port=None if codec.lower() == "off" else int(codec),
            namespace=env.get("TEMPORAL_NAMESPACE", "default"),
            task_queue=env.get("TEMPORAL_TASK_QUEUE", "workspace-memory-turns"),
            worker_auth=env.get("AUTOMATION_AUTH", "dev:worker"),
            model_provider=env.get("MODEL_PROVIDER", "scripted"),
            new_process_groups=True,
        )


class LocalStack:
    """The stack's pieces, each started on first use and all stopped on exit (see the module docstring).

    `cancel`, when set (by a signal handler, say), makes a start in progress stop what it started and raise
    `Interrupted`.
    """

    def __init__(self, config: StackConfig | None = None, *, cancel: threading.Event | None = None) -> None:
        self.config = config or StackConfig()
        self._cancel = cancel
        self._exit = ExitStack()
        self._temporal_port = self.config.temporal_port
        self._moto_endpoint: str | None = None
        self._resources: LocalResources | None = None
        self._temporal_address: str | None = None
        self._environment: dict[str, str] | None = None
        self._api: str | None = None
        self._gateway: Gateway | None = None
        self._clock_dir: Path | None = None
        self.children: list[tuple[str, Process]] = []
        """The processes started, by name, in order: the moto server, the Temporal dev server, the worker."""

    def __enter__(self) -> LocalStack:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with signals_held():
            self._exit.close()

    def checkpoint(self) -> None:
        """Raises `Interrupted` once the cancel event is set."""
        if self._cancel is not None and self._cancel.is_set():
            raise Interrupted

    def _child(self, name: str, proc: Process) -> None:
        self._exit.callback(stop, proc)
        self.children.append((name, proc))
        self.checkpoint()

    # -- the pieces ---------------------------------------------------------------------------------------

    def moto(self) -> str:
        """The moto server's endpoint URL."""
        if self._moto_endpoint is None and self.config.moto_endpoint:
            self._moto_endpoint = self.config.moto_endpoint
        if self._moto_endpoint is None:
            host, port = self.config.host, self.config.moto_port
            proc, self._moto_endpoint = start_moto(host, port, new_process_group=self.config.new_process_groups)
            self._child("moto server", proc)
        return self._moto_endpoint

    def resources(self) -> LocalResources:
        """The table (from template.yaml) and the KMS key, on the moto server."""
        if self._resources is None:
            self._resources = provision(self.moto(), self.config.table_name)
            self.checkpoint()
        return self._resources

    @property
    def provisioned(self) -> LocalResources | None:
        """The resources `resources()` made, or None while nothing asked for them (no moto call made here)."""
        return self._resources

    @property
    def temporal_port(self) -> int:
        """The Temporal dev server's gRPC port; a free one is chosen when first needed."""
        if self._temporal_port is None:
            self._temporal_port = free_port(self.config.host)
        return self._temporal_port

    def temporal(self) -> str:
        """The Temporal dev server's `host:port`, once it serves the stack's namespace."""
        if self._temporal_address is None and self.config.temporal_address:
            self._temporal_address = self.config.temporal_address
        if self._temporal_address is None:
            config = self.config
            if config.temporal_db is not None:
                config.temporal_db.parent.mkdir(parents=True, exist_ok=True)
                config.temporal_db.unlink(missing_ok=True)
            if config.temporal_log is not None:
                config.temporal_log.parent.mkdir(parents=True, exist_ok=True)
            try:
                proc, self._temporal_address = start_temporal(
                    self.temporal_port,
                    config.temporal_ui_port,
                    config.temporal_db,
                    config.host,
                    namespaces=[config.namespace],
                    codec_endpoint=self.codec_url,
                    log_file=config.temporal_log,
                    new_process_group=config.new_process_groups,
                    cancel=self._cancel,
                )
            except TemporalStartCancelled as exc:
                raise Interrupted from exc
            self._child("Temporal dev server", proc)
        return self._temporal_address

    @property
    def temporal_ui(self) -> str | None:
        port = self.config.temporal_ui_port
        return None if port is None else f"http://{self.config.host}:{port}"

    @property
    def codec_url(self) -> str | None:
        port = self.config.codec_port
        return None if port is None else f"http://{self.config.host}:{port}"

    def codec(self) -> str | None:
        """The codec server, with the stack's environment and the UI's origins (None without CODEC_PORT)."""
        config = self.config
        if config.codec_port is None or "codec server" in dict(self.children):
            return self.codec_url
        ui = (
            []
            if config.temporal_ui_port is None
            else [f"http://{h}:{config.temporal_ui_port}" for h in (config.host, "localhost")]
        )
        env = {**os.environ, **self.environment(), "PYTHONUNBUFFERED": "1"}
        proc, url = start_codec(env, config.codec_port, ui, config.host, new_process_group=config.new_process_groups)
        self._child("codec server", proc)
        return url

    def environment(self) -> dict[str, str]:
        """What the stack resolves for its functions (`functions.stack_environment`): fake credentials, the
        local endpoint, the table, the key, Temporal (at the address it has or will have), the clock file."""
        config = self.config
        address = config.temporal_address or f"{config.host}:{self.temporal_port}"
        return stack_environment(
            self.resources(),
            address,
            config.namespace,
            config.task_queue,
            self.clock_file,
            config.handler_environment,
        )

    @property
    def clock_file(self) -> Path:
        """The local-only clock the stack's services read (`pinned_clock`); absent: the system's time."""
        if self._clock_dir is None:
            self._clock_dir = Path(tempfile.mkdtemp(prefix="wm-clock-"))
            self._exit.callback(shutil.rmtree, self._clock_dir, ignore_errors=True)
        return self._clock_dir / "epoch"

    def pinned_clock(self, at: float) -> AbstractContextManager[PinnedClock]:
        """Every function of the stack reads `at` as the time until the block ends (a test's fixed hour)."""
        return pinned(self.clock_file, at)

    def settings(self, **update: object) -> Settings:
        """The settings the stack's handlers build their services from, with `update` applied."""
        return Settings.from_environ(self.environment()).model_copy(update=update)

    def use_environment(self) -> dict[str, str]:
        """Points this process's environment at the stack (restored on exit) and drops the handlers' cached
        services, so the next request builds them from it. Returns what it set."""
        if self._environment is None:
            from workspace_memory import bootstrap

            env = self.environment()
            saved = {name: os.environ.get(name) for name in env}
            self._exit.callback(bootstrap.turn_service.cache_clear)
            self._exit.callback(bootstrap.services.cache_clear)
            self._exit.callback(_restore, saved)
            os.environ.update(env)
            bootstrap.services.cache_clear()
            bootstrap.turn_service.cache_clear()
            self._environment = env
        return dict(self._environment)

    def gateway(self) -> str:
        """The local gateway's base URL: the template's routes in front of its functions' execution
        environments (scripts/localstack/gateway.py), served from a thread."""
        if self._api is None:
            from scripts.artifact.build import BuildError
            from scripts.localstack.gateway import Gateway, serving

            config = self.config
            if config.gateway_mode == "threads":
                self.use_environment()  # in-process handlers read their settings from this environment
            environment = self.environment()
            try:
                gateway = Gateway(environment, mode=config.gateway_mode, log=config.function_log)
            except BuildError as exc:
                raise StartError(f"local gateway: the artifact did not build: {exc}") from exc
            self._gateway = self._exit.enter_context(gateway)
            host, port = config.host, config.gateway_port
            try:
                self._api = self._exit.enter_context(serving(self._gateway, host, port))
            except OSError as exc:
                raise StartError(f"local gateway failed to start on {host}:{port}: {exc}") from exc
            self.checkpoint()
        return self._api

    def worker_settings(self, **update: object) -> Settings:
        """The worker's settings: the stack's, calling the gateway with the dev credential."""
        base = {
            "automation_base_url": self.gateway(),
            "automation_auth": self.config.worker_auth,
            "model_provider": self.config.model_provider,
        }
        return self.settings(**{**base, **update})

    def worker_thread(self, settings: Settings | None = None, parts: WorkerParts | None = None) -> Settings:
        """The production worker polling in a thread of this process until exit; returns its settings."""
        from workflows.worker import build_worker_parts, worker_in_thread

        self.temporal()
        settings = settings or self.worker_settings()
        self._exit.enter_context(worker_in_thread(settings, parts or build_worker_parts(settings)))
        return settings

    def worker_process(self, echo: Callable[[str], None] = echo_worker_line) -> Process | None:
        """`python -m workflows.worker` with the worker's environment, once ready (None if it is not)."""
        self.temporal()
        settings = self.worker_settings()
        env = {
            **os.environ,
            **self.environment(),
            "AUTOMATION_BASE_URL": settings.automation_base_url or "",
            "AUTOMATION_AUTH": settings.automation_auth,
            "MODEL_PROVIDER": settings.model_provider,
            "PYTHONUNBUFFERED": "1",
        }
        proc = start_worker(
            env,
            cancel=self._cancel,
            echo=echo,
            new_process_group=self.config.new_process_groups,
        )
        if proc is not None:
            self._child("worker", proc)
        return proc

    def up(self, worker: Literal["process", "thread"] | None = "process") -> LocalStack:
        """Everything, in `make dev`'s order: moto and its resources, the gateway, Temporal, the codec server
        (if configured) and a worker (`process`, `thread` or None)."""
        self.resources()
        self.gateway()
        self.temporal()
        self.codec()
        if worker == "process":
            self.worker_process()
        elif worker == "thread":
            self.worker_thread()
        return self

    def cold_starts(self) -> list[ColdStart]:
        """The gateway's cold starts so far, one per execution environment started."""
        return [] if self._gateway is None else self._gateway.cold_starts()

    @property
    def api(self) -> str:
        if self._api is None:
            raise RuntimeError("the gateway has not started: call gateway() first")
        return self._api


def _restore(saved: Mapping[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
