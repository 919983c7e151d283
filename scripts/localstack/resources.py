"""Creates the stack's tables (from template.yaml), KMS key and change-feed bus on a moto server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError

from scripts.localstack.template import bus_name, load_template, table_definition, ttl_attribute

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
"""Set for every local process, so nothing can ever sign a request for real AWS."""

AWS_ISOLATION = {
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}
"""No profile, config file or instance metadata: no other credentials can be found."""


def isolate_environment() -> None:
    """Fake credentials and no profile, config file or instance metadata: nothing this process (or a child
    inheriting its environment) starts can sign a request for real AWS. Call it before boto3 is used."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    os.environ.update(AWS_ISOLATION)


@dataclass(frozen=True)
class LocalResources:
    endpoint_url: str
    table_name: str
    kms_key_arn: str
    key_store_table_name: str
    change_feed_bus: str | None = None
    """The change feed's EventBridge bus (template.yaml's ChangeFeedBus), when provisioned."""

    def environment(self) -> dict[str, str]:
        """What a Lambda function of the template would see, pointed at the local endpoint."""
        feed = {} if self.change_feed_bus is None else {"CHANGE_FEED_BUS_NAME": self.change_feed_bus}
        return {
            **FAKE_CREDENTIALS,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "TABLE_NAME": self.table_name,
            "KEY_STORE_TABLE_NAME": self.key_store_table_name,
            "KMS_KEY_ID": self.kms_key_arn,
            "POWERTOOLS_SERVICE_NAME": "workspace-memory",
            **feed,
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
    there is nothing to migrate from the scheme before branch keys
    (docs/decisions/0013-a-branch-key-per-workspace.md)."""
    ddb = _client("dynamodb", endpoint_url)
    ddb.create_table(TableName=table_name, **table_definition(load_template(), "BranchKeyTable"))
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


KEY_DESCRIPTION = "workspace-memory local key"


def create_key(endpoint_url: str) -> str:
    kms = _client("kms", endpoint_url)
    key = kms.create_key(Description=KEY_DESCRIPTION, KeyUsage="ENCRYPT_DECRYPT")
    arn: str = key["KeyMetadata"]["Arn"]
    kms.enable_key_rotation(KeyId=arn)
    return arn


def create_bus(endpoint_url: str, stack_name: str) -> str:
    """The change feed's bus, named as template.yaml names ChangeFeedBus for a stack called `stack_name`. moto
    5.2.5's DynamoDB Streams cannot feed a function here (DescribeStream is not implemented), so the feed's
    handler is run on stream records built from the table's items (scripts/change_feed_event.py)."""
    name = bus_name(load_template(), stack_name)
    _client("events", endpoint_url).create_event_bus(Name=name)
    return name


def provision(endpoint_url: str, table_name: str = "workspace-memory") -> LocalResources:
    create_table(endpoint_url, table_name)
    key_store_table = f"{table_name}-branch-keys"
    create_key_store_table(endpoint_url, key_store_table)
    key = create_key(endpoint_url)
    return LocalResources(endpoint_url, table_name, key, key_store_table, create_bus(endpoint_url, table_name))


def discover(endpoint_url: str, table_name: str = "workspace-memory") -> LocalResources:
    """The resources `provision` made on a moto server that is running already (`make dev`'s): the table and
    its branch-key store by name, the newest enabled local key, the bus by the template's naming."""
    ddb = _client("dynamodb", endpoint_url)
    key_store_table = f"{table_name}-branch-keys"
    for name in (table_name, key_store_table):
        try:
            ddb.describe_table(TableName=name)
        except (ddb.exceptions.ResourceNotFoundException, BotoCoreError) as exc:
            raise LookupError(f"no table {name!r} on {endpoint_url}: is the local stack (make dev) running?") from exc
    kms = _client("kms", endpoint_url)
    keys = [kms.describe_key(KeyId=k["KeyId"])["KeyMetadata"] for k in kms.list_keys(Limit=1000)["Keys"]]
    ours = [k for k in keys if k.get("Description") == KEY_DESCRIPTION and k.get("KeyState") == "Enabled"]
    if not ours:
        raise LookupError(f"no enabled {KEY_DESCRIPTION!r} on {endpoint_url}")
    newest = max(ours, key=lambda k: k["CreationDate"])
    bus = bus_name(load_template(), table_name)
    return LocalResources(endpoint_url, table_name, str(newest["Arn"]), key_store_table, bus)
