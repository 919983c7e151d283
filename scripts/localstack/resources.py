"""Creates the stack's tables (from template.yaml) and KMS key on a moto server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import boto3

from scripts.localstack.template import load_template, table_definition, ttl_attribute

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
"""Set for every local process, so nothing can ever sign a request for real AWS."""


def isolate_environment() -> None:
    """Fake credentials and no profile, config file or instance metadata: nothing this process (or a child
    inheriting its environment) starts can sign a request for real AWS. Call it before boto3 is used."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


@dataclass(frozen=True)
class LocalResources:
    endpoint_url: str
    table_name: str
    kms_key_arn: str
    key_store_table_name: str

    def environment(self) -> dict[str, str]:
        """What a Lambda function of the template would see, pointed at the local endpoint."""
        return {
            **FAKE_CREDENTIALS,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "TABLE_NAME": self.table_name,
            "KEY_STORE_TABLE_NAME": self.key_store_table_name,
            "KMS_KEY_ID": self.kms_key_arn,
            "POWERTOOLS_SERVICE_NAME": "workspace-memory",
        }


def _client(service: str, endpoint_url: str) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service,
        endpoint_url=endpoint_url,
        region_name=FAKE_CREDENTIALS["AWS_REGION"],
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
    )


def create_table(endpoint_url: str, table_name: str) -> None:
    template = load_template()
    ddb = _client("dynamodb", endpoint_url)
    ddb.create_table(TableName=table_name, **table_definition(template))
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    ddb.update_time_to_live(
        TableName=table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_attribute(template)},
    )


def create_key_store_table(endpoint_url: str, table_name: str) -> None:
    """The branch-key store, from template.yaml's BranchKeyTable (the Material Providers Library's schema).
    Like moto's other state it lives in memory: every local stack starts with no workspace and no key, so
    there is nothing to migrate from the scheme before branch keys (docs/decisions.md)."""
    ddb = _client("dynamodb", endpoint_url)
    ddb.create_table(TableName=table_name, **table_definition(load_template(), "BranchKeyTable"))
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


def create_key(endpoint_url: str) -> str:
    kms = _client("kms", endpoint_url)
    key = kms.create_key(Description="workspace-memory local key", KeyUsage="ENCRYPT_DECRYPT")
    arn: str = key["KeyMetadata"]["Arn"]
    kms.enable_key_rotation(KeyId=arn)
    return arn


def provision(endpoint_url: str, table_name: str = "workspace-memory") -> LocalResources:
    create_table(endpoint_url, table_name)
    key_store_table = f"{table_name}-branch-keys"
    create_key_store_table(endpoint_url, key_store_table)
    return LocalResources(endpoint_url, table_name, create_key(endpoint_url), key_store_table)
