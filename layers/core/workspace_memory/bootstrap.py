"""Composition root: the only module that reads the environment; runs once per cold start.

The adapters (boto3, the encryption SDK and the Material Providers Library, the Temporal client) are
imported when the services are first built, not when a handler module is imported: a handler pays at import
only for its routes and models. The Temporal client is loaded by the conversations function and by the
workspaces function's deletion routes only, on first use. So is the telemetry (`instrumented`): the metrics
sink and, where tracing is on, powertools' Tracer, whose X-Ray SDK imports botocore's session.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from workspace_memory.adapters.aws import AwsClients
    from workspace_memory.adapters.branch_keys import BranchKeyStore
    from workspace_memory.adapters.routed_cipher import RoutedCipher
    from workspace_memory.adapters.temporal_consolidation import TemporalWorkspaceRuns
    from workspace_memory.consolidation.control import ConsolidationControl
    from workspace_memory.consolidation.service import ConsolidationService
    from workspace_memory.document.policy import PolicyService
    from workspace_memory.document.purge import PurgeService
    from workspace_memory.document.retention import RetentionService
    from workspace_memory.document.service import DocumentService
    from workspace_memory.entries.agent_entries import AgentEntryService
    from workspace_memory.entries.service import EntryService
    from workspace_memory.governance.audit import AuditService
    from workspace_memory.governance.changefeed import ChangeFeed
    from workspace_memory.governance.mentions import MentionSearch
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.kernel.settings import Settings
    from workspace_memory.pages.service import PageService
    from workspace_memory.search.engine import Embedder
    from workspace_memory.search.entry_search import SearchService
    from workspace_memory.search.reindex import Reindexer
    from workspace_memory.store.ports import Table
    from workspace_memory.turns.admission import AdmissionService
    from workspace_memory.turns.capture import CaptureService
    from workspace_memory.turns.notes import NotesService
    from workspace_memory.turns.recall import RecallService
    from workspace_memory.turns.service import TurnService
    from workspace_memory.workspaces.access import AccessService
    from workspace_memory.workspaces.deletion import DeletionService, WorkspacePurgeService
    from workspace_memory.workspaces.erasure import ErasureService
    from workspace_memory.workspaces.erasure_steps import MemberErasureSteps
    from workspace_memory.workspaces.exports import ExportService
    from workspace_memory.workspaces.imports import ImportService
    from workspace_memory.workspaces.keysessions import KeySessionService

R = TypeVar("R")
LambdaHandler = Callable[[dict[str, Any], Any], R]


@dataclass(frozen=True)
class Services:
    settings: Settings
    clients: AwsClients
    table: Table
    """The table, every transaction of which carries its audit event (`store/audit_trail`)."""
    cipher: RoutedCipher
    """Workspace data under the workspace's branch key, Temporal payloads under the KMS key (routed_cipher)."""
    key_store: BranchKeyStore
    clock: Clock
    access: AccessService
    policy: PolicyService
    document: DocumentService
    key_sessions: KeySessionService
    admission: AdmissionService
    recall: RecallService
    capture: CaptureService
    notes: NotesService
    retention: RetentionService
    purge: PurgeService
    """Forgetting a line in every retained version of the document."""
    workspace_purge: WorkspacePurgeService
    """Deleting a tombstoned workspace's items in batches (the deletion workflow's steps)."""
    entries: EntryService
    search: SearchService
    """Hybrid search over the entries a caller may see, with this process's warm indexes."""
    agent_entries: AgentEntryService
    """The agent's entry tools: save through the fence, read, propose a forget."""
    audit: AuditService
    """Reading the workspace's audit trail (owner: all of it; a member: their own actions)."""


def build_services(settings: Settings, clock: Clock | None = None, clients: AwsClients | None = None) -> Services:
    from workspace_memory.adapters.aws import build_clients
    from workspace_memory.adapters.branch_keys import BranchKeyCipher, BranchKeyStore, key_store
    from workspace_memory.adapters.dynamo import DynamoTable
    from workspace_memory.adapters.kms_cipher import payload_cipher
    from workspace_memory.adapters.routed_cipher import RoutedCipher
    from workspace_memory.document.policy import PolicyService
    from workspace_memory.document.purge import PurgeService
    from workspace_memory.document.retention import RetentionService
    from workspace_memory.document.service import DocumentService
    from workspace_memory.entries.agent_entries import AgentEntryService
    from workspace_memory.entries.service import EntryService
    from workspace_memory.governance.audit import AuditService
    from workspace_memory.kernel.clock import FileClock, SystemClock
    from workspace_memory.search.entry_search import SearchService, WarmIndexes
    from workspace_memory.search.write_check import ConflictCheck
    from workspace_memory.store.audit_trail import AuditedTable
    from workspace_memory.turns.admission import AdmissionService
    from workspace_memory.turns.capture import CaptureService
    from workspace_memory.turns.notes import NotesService
    from workspace_memory.turns.recall import RecallService
    from workspace_memory.workspaces.access import AccessService
    from workspace_memory.workspaces.deletion import WorkspacePurgeService
    from workspace_memory.workspaces.keysessions import KeySessionService

    if settings.key_store_table_name is None:
        raise ValueError("KEY_STORE_TABLE_NAME is not set: workspace data is encrypted under branch keys")
    if clock is None:
        clock = SystemClock() if settings.local_clock_file is None else FileClock(settings.local_clock_file)
    clients = clients or build_clients(settings)
    table = AuditedTable(DynamoTable(clients.dynamodb, settings.table_name), clock, settings.audit_days)
    store = key_store(clients.key_store, clients.kms, settings.key_store_table_name, settings.kms_key_id)
    branch_keys = BranchKeyStore(store, clients.key_store, settings.key_store_table_name)
    cipher = RoutedCipher(BranchKeyCipher(store), payload_cipher(clients.kms, settings.kms_key_id))
    embedder = build_embedder(settings)
    entries = EntryService(table, cipher, clock, embedder=embedder, version_cap=settings.entry_version_cap)
    search = SearchService(table, cipher, clock, embedder, WarmIndexes(settings.search_memory_budget))
    entries.write_check.finder = ConflictCheck(search)  # the contradiction check runs over its warm indexes
    return Services(
        settings=settings,
        clients=clients,
        table=table,
        cipher=cipher,
        key_store=branch_keys,
        clock=clock,
        access=AccessService(table, clock, branch_keys, cipher),
        policy=PolicyService(table, clock),
        document=DocumentService(table, cipher, clock),
        key_sessions=KeySessionService(table, clock, cipher),
        admission=AdmissionService(table, cipher, clock),
        recall=RecallService(table, cipher, clock, search),
        capture=CaptureService(table, cipher, clock),
        notes=NotesService(table, cipher, clock),
        retention=RetentionService(table, clock),
        purge=PurgeService(table, cipher, clock),
        workspace_purge=WorkspacePurgeService(table, branch_keys),
        entries=entries,
        search=search,
        agent_entries=AgentEntryService(table, cipher, clock, entries, search),
        audit=AuditService(table, clock),
    )


def build_embedder(settings: Settings) -> Embedder:
    """The local model unless EMBEDDER=bedrock; neither is loaded until the first vector is asked for."""
    from workspace_memory.search.embedders import LocalEmbedder, TitanEmbedder

    if settings.embedder == "bedrock":
        from workspace_memory.adapters.aws import build_bedrock_client

        return TitanEmbedder(build_bedrock_client(settings))
    return LocalEmbedder()


@functools.cache
def services() -> Services:
    from workspace_memory.kernel.settings import Settings

    return build_services(Settings.from_environ(os.environ))


def _temporal_connect() -> dict[str, Any]:
    """TLS, API key and gRPC metadata for an authenticated namespace, as the worker reads them (TEMPORAL_*
    variables or a temporal.toml profile): every Temporal client a function builds connects with these."""
    from temporalio.envconfig import ClientConfig

    return dict(ClientConfig.load_client_connect_config(override_env_vars=dict(os.environ)))


@functools.cache
def turn_service() -> TurnService:
    """Built on first use, in the conversations function only: it owns the Temporal client's loop."""
    from workspace_memory.adapters.temporal_turns import TemporalTurns
    from workspace_memory.turns.service import TurnService

    base = services()
    return TurnService(base.table, base.admission, TemporalTurns(base.settings, base.cipher, _temporal_connect()))


@functools.cache
def change_feed() -> ChangeFeed:
    """The change-feed function's one service: no table, no key, only the feed's bus."""
    from workspace_memory.adapters.aws import build_events_client
    from workspace_memory.adapters.eventbridge import EventBridgePublisher
    from workspace_memory.governance.changefeed import ChangeFeed
    from workspace_memory.kernel.settings import Settings

    settings = Settings.from_environ(os.environ)
    if settings.change_feed_bus is None:
        raise ValueError("CHANGE_FEED_BUS_NAME is not set: the change feed has nowhere to publish")
    return ChangeFeed(EventBridgePublisher(build_events_client(settings), settings.change_feed_bus))


@functools.cache
def workspace_runs() -> TemporalWorkspaceRuns:
    """The workspaces function's one Temporal client, built on first use by its deletion and consolidation
    routes only."""
    from workspace_memory.adapters.temporal_consolidation import TemporalWorkspaceRuns

    base = services()
    return TemporalWorkspaceRuns(base.settings, base.cipher, _temporal_connect())


@functools.cache
def deletion_service() -> DeletionService:
    """Built on first use, by the deletion routes of the workspaces function only (the Temporal client)."""
    from workspace_memory.workspaces.deletion import DeletionService

    base = services()
    runs = workspace_runs()
    return DeletionService(base.table, base.key_store, base.clock, runs, schedules=runs)


@functools.cache
def consolidation_control() -> ConsolidationControl:
    """The owner's consolidation settings, schedule and on-demand runs (the workspaces function's routes)."""
    from workspace_memory.consolidation.control import ConsolidationControl

    base = services()
    return ConsolidationControl(base.table, base.clock, workspace_runs())


@functools.cache
def erasure_service() -> ErasureService:
    """Built on first use, by the erasure routes of the workspaces function only (the Temporal client)."""
    from workspace_memory.adapters.temporal_erasures import TemporalErasures
    from workspace_memory.workspaces.erasure import ErasureService

    base = services()
    return ErasureService(base.table, base.clock, TemporalErasures(base.settings, base.cipher, _temporal_connect()))


@functools.cache
def erasure_steps() -> MemberErasureSteps:
    """The erasure workflow's steps, served by the deletion function."""
    from workspace_memory.workspaces.erasure_steps import MemberErasureSteps

    base = services()
    return MemberErasureSteps(base.table, base.clock, base.entries.forgetting)


@functools.cache
def reindexer() -> Reindexer:
    """The owner's reindex of a workspace's search (the entries function's route)."""
    from workspace_memory.search.reindex import Reindexer

    base = services()
    return Reindexer(base.table, base.cipher, base.clock, base.search)


@functools.cache
def consolidation_service() -> ConsolidationService:
    """Consolidation's steps and run records (the entries function's routes: they need the search index)."""
    from workspace_memory.consolidation.service import ConsolidationService

    base = services()
    return ConsolidationService(base.table, base.clock, base.search)


def page_service() -> PageService:
    """Pages (the entries function's page routes; consolidation builds its own from the same parts)."""
    from workspace_memory.pages.service import PageService

    base = services()
    return PageService(base.table, base.cipher, base.clock)


@functools.cache
def mention_search() -> MentionSearch:
    """Where stored text mentions someone (the entries function's route)."""
    from workspace_memory.governance.mentions import MentionSearch

    base = services()
    return MentionSearch(base.table, base.cipher, base.clock)


@functools.cache
def export_service() -> ExportService:
    """Built on first use, by the exports function only (the Temporal client)."""
    from workspace_memory.adapters.temporal_exports import TemporalExports
    from workspace_memory.workspaces.exports import ExportService

    base = services()
    runner = TemporalExports(base.settings, base.cipher, _temporal_connect())
    return ExportService(base.table, base.cipher, base.clock, runner)


def import_service() -> ImportService:
    """Built on first use, by the exports function only (the Temporal client)."""
    from workspace_memory.adapters.temporal_imports import TemporalImports
    from workspace_memory.workspaces.imports import ImportService

    base = services()
    runner = TemporalImports(base.settings, base.cipher, _temporal_connect())
    return ImportService(base.table, base.cipher, base.clock, runner)


TRACED_MODULES = ("botocore",)
_NAMESPACE = re.compile(r"[A-Za-z0-9._/#:-]{1,255}")
_TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class Telemetry:
    """What every function's entry point runs inside: a Tracer when tracing is on (None: off)."""

    tracer: Any

    def around(self, handler: LambdaHandler[R]) -> LambdaHandler[R]:
        """Neither the handler's response (a document's text, an entry's) nor an error's message (it could
        carry anything) is put into the trace: powertools would record both by default."""
        if self.tracer is None:
            return handler
        traced: LambdaHandler[R] = self.tracer.capture_lambda_handler(
            handler, capture_response=False, capture_error=False
        )
        return traced


def tracing_on(env: Mapping[str, str]) -> bool:
    """Powertools' own rule: on in Lambda (LAMBDA_TASK_ROOT), off under `sam local` or with
    POWERTOOLS_TRACE_DISABLED; the local stack sets the latter (there is no X-Ray daemon to send to)."""
    disabled = env.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() in _TRUE
    return bool(env.get("LAMBDA_TASK_ROOT")) and not env.get("AWS_SAM_LOCAL") and not disabled


def build_telemetry(env: Mapping[str, str]) -> Telemetry:
    """Installs the EMF sink of the metrics port (unless POWERTOOLS_METRICS_DISABLED, or outside a function:
    no POWERTOOLS_METRICS_NAMESPACE) and builds the Tracer when tracing is on. A namespace CloudWatch would
    refuse fails here, at the first invocation, not at the first count."""
    from workspace_memory.kernel import metrics

    namespace = env.get("POWERTOOLS_METRICS_NAMESPACE")
    service = env.get("POWERTOOLS_SERVICE_NAME", "").strip() or "workspace-memory"
    if namespace is not None and not _NAMESPACE.fullmatch(namespace):
        raise ValueError("POWERTOOLS_METRICS_NAMESPACE must be 1-255 of [A-Za-z0-9._/#:-]")
    if namespace is None or env.get("POWERTOOLS_METRICS_DISABLED", "").strip().lower() in _TRUE:
        metrics.install(None)
    else:
        from workspace_memory.adapters.emf_metrics import EmfMetrics

        metrics.install(EmfMetrics(namespace, service))
    if not tracing_on(env):
        return Telemetry(None)
    from aws_lambda_powertools import Tracer

    # Only the AWS SDK is patched: its X-Ray subsegments name the operation and the table, never a key or a
    # value. HTTP clients are not: their subsegments record the URL, and the worker's `/search?q=` is memory text.
    return Telemetry(Tracer(service=service, patch_modules=TRACED_MODULES))


@functools.cache
def telemetry() -> Telemetry:
    return build_telemetry(os.environ)


def instrumented(handler: LambdaHandler[R]) -> LambdaHandler[R]:
    """`handler` inside the process's telemetry, built at its first invocation rather than at import: a
    handler's cold import stays what it was (tests/unit/test_cold_start.py), and a function with tracing off
    never imports the X-Ray SDK."""
    built: list[LambdaHandler[R]] = []

    @functools.wraps(handler)
    def entry(event: dict[str, Any], context: Any) -> R:
        if not built:
            built.append(telemetry().around(handler))
        return built[0](event, context)

    return entry
