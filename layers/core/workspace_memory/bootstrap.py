"""Composition root: the only module that reads the environment; runs once per cold start.

The adapters (boto3, the encryption SDK and the Material Providers Library, the Temporal client) are
imported when the services are first built, not when a handler module is imported: a handler pays at import
only for its routes and models. The Temporal client is loaded by the conversations function and by the
workspaces function's deletion routes only, on first use.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workspace_memory.adapters.aws import AwsClients
    from workspace_memory.adapters.branch_keys import BranchKeyStore
    from workspace_memory.adapters.dynamo import DynamoTable
    from workspace_memory.adapters.routed_cipher import RoutedCipher
    from workspace_memory.document.policy import PolicyService
    from workspace_memory.document.purge import PurgeService
    from workspace_memory.document.retention import RetentionService
    from workspace_memory.document.service import DocumentService
    from workspace_memory.entries.agent_entries import AgentEntryService
    from workspace_memory.entries.service import EntryService
    from workspace_memory.governance.changefeed import ChangeFeed
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.kernel.settings import Settings
    from workspace_memory.search.engine import Embedder
    from workspace_memory.search.entry_search import SearchService
    from workspace_memory.turns.admission import AdmissionService
    from workspace_memory.turns.capture import CaptureService
    from workspace_memory.turns.notes import NotesService
    from workspace_memory.turns.recall import RecallService
    from workspace_memory.turns.service import TurnService
    from workspace_memory.workspaces.access import AccessService
    from workspace_memory.workspaces.deletion import DeletionService, WorkspacePurgeService
    from workspace_memory.workspaces.keysessions import KeySessionService


@dataclass(frozen=True)
class Services:
    settings: Settings
    clients: AwsClients
    table: DynamoTable
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
    from workspace_memory.kernel.clock import FileClock, SystemClock
    from workspace_memory.search.entry_search import SearchService, WarmIndexes
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
    table = DynamoTable(clients.dynamodb, settings.table_name)
    store = key_store(clients.key_store, clients.kms, settings.key_store_table_name, settings.kms_key_id)
    branch_keys = BranchKeyStore(store, clients.key_store, settings.key_store_table_name)
    cipher = RoutedCipher(BranchKeyCipher(store), payload_cipher(clients.kms, settings.kms_key_id))
    embedder = build_embedder(settings)
    entries = EntryService(table, cipher, clock, embedder=embedder, version_cap=settings.entry_version_cap)
    search = SearchService(table, cipher, clock, embedder, WarmIndexes(settings.search_memory_budget))
    return Services(
        settings=settings,
        clients=clients,
        table=table,
        cipher=cipher,
        key_store=branch_keys,
        clock=clock,
        access=AccessService(table, clock, branch_keys),
        policy=PolicyService(table, clock),
        document=DocumentService(table, cipher, clock),
        key_sessions=KeySessionService(table, clock),
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
    )


def build_embedder(settings: Settings) -> Embedder:
    """The local model unless EMBEDDER=bedrock; neither is loaded until the first vector is asked for."""
    from workspace_memory.search.engine import LocalEmbedder, TitanEmbedder

    if settings.embedder == "bedrock":
        from workspace_memory.adapters.aws import build_bedrock_client

        return TitanEmbedder(build_bedrock_client(settings))
    return LocalEmbedder()


@functools.cache
def services() -> Services:
    from workspace_memory.kernel.settings import Settings

    return build_services(Settings.from_environ(os.environ))


@functools.cache
def turn_service() -> TurnService:
    """Built on first use, in the conversations function only: it owns the Temporal client's loop."""
    from temporalio.envconfig import ClientConfig

    from workspace_memory.adapters.temporal_turns import TemporalTurns
    from workspace_memory.turns.service import TurnService

    base = services()
    # TLS, API key and gRPC metadata for an authenticated namespace, as the worker reads them (TEMPORAL_*
    # variables or a temporal.toml profile).
    connect = ClientConfig.load_client_connect_config(override_env_vars=dict(os.environ))
    return TurnService(base.table, base.admission, TemporalTurns(base.settings, base.cipher, connect))


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
def deletion_service() -> DeletionService:
    """Built on first use, by the deletion routes of the workspaces function only (the Temporal client)."""
    from temporalio.envconfig import ClientConfig

    from workspace_memory.adapters.temporal_deletions import TemporalDeletions
    from workspace_memory.workspaces.deletion import DeletionService

    base = services()
    connect = ClientConfig.load_client_connect_config(override_env_vars=dict(os.environ))
    runner = TemporalDeletions(base.settings, base.cipher, connect)
    return DeletionService(base.table, base.key_store, base.clock, runner)
