"""Builds the boto3 clients from settings; the only place outside scripts that creates them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

from workspace_memory.kernel.settings import Settings

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=10)


@dataclass(frozen=True)
class AwsClients:
    dynamodb: Any  # the resource's client: native Python types in and out
    kms: Any
    key_store: Any  # a plain DynamoDB client (DynamoDB JSON), as the branch-key store of the MPL needs


def build_clients(settings: Settings, session: boto3.session.Session | None = None) -> AwsClients:
    session = session or boto3.session.Session(region_name=settings.region)
    resource = session.resource("dynamodb", endpoint_url=settings.endpoint_url, config=_CONFIG)
    kms = session.client("kms", endpoint_url=settings.endpoint_url, config=_CONFIG)
    key_store = session.client("dynamodb", endpoint_url=settings.endpoint_url, config=_CONFIG)
    return AwsClients(dynamodb=resource.meta.client, kms=kms, key_store=key_store)


def build_bedrock_client(settings: Settings, session: boto3.session.Session | None = None) -> Any:
    """Bedrock Runtime, for Titan embeddings when EMBEDDER=bedrock (never on the local stack)."""
    session = session or boto3.session.Session(region_name=settings.region)
    return session.client("bedrock-runtime", config=_CONFIG)


def build_events_client(settings: Settings, session: boto3.session.Session | None = None) -> Any:
    """EventBridge, for the change feed (the only function that publishes events)."""
    session = session or boto3.session.Session(region_name=settings.region)
    return session.client("events", endpoint_url=settings.endpoint_url, config=_CONFIG)
