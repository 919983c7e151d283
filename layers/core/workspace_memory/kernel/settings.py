"""Settings, validated once at cold start from the process environment by the composition root."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workspace_memory.kernel.loopback import is_loopback_host

LOCAL_STACK_FLAG = "WM_LOCAL_STACK"
"""`1` in the local stack's functions (scripts/localstack); never set by template.yaml."""
LOCAL_CLOCK_FILE = "WM_LOCAL_CLOCK_FILE"
"""The local stack's clock file (`clock.FileClock`): honoured only with the flag and a loopback endpoint."""

ENV_NAMES = {
    "table_name": "TABLE_NAME",
    "kms_key_id": "KMS_KEY_ID",
    "key_store_table_name": "KEY_STORE_TABLE_NAME",
    "region": "AWS_REGION",
    "endpoint_url": "AWS_ENDPOINT_URL",
    "temporal_address": "TEMPORAL_ADDRESS",
    "temporal_namespace": "TEMPORAL_NAMESPACE",
    "temporal_task_queue": "TEMPORAL_TASK_QUEUE",
    "model_provider": "MODEL_PROVIDER",
    "bedrock_model_id": "BEDROCK_MODEL_ID",
    "automation_base_url": "AUTOMATION_BASE_URL",
    "automation_auth": "AUTOMATION_AUTH",
    "change_feed_bus": "CHANGE_FEED_BUS_NAME",
    "embedder": "EMBEDDER",
    "search_memory_budget": "SEARCH_MEMORY_BUDGET",
    "entry_version_cap": "ENTRY_VERSION_CAP",
    "audit_days": "AUDIT_RETENTION_DAYS",
    "local_stack": LOCAL_STACK_FLAG,
    "local_clock_file": LOCAL_CLOCK_FILE,
}
"""The environment variable each setting comes from, so a refusal names what to set."""


class SettingsError(ValueError):
    """The environment makes no valid settings: the message names the variables and what is wrong with them,
    never their values (a value may be a secret)."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    table_name: str = Field(min_length=3)
    kms_key_id: str = Field(min_length=1)
    key_store_table_name: str | None = Field(default=None, min_length=3)
    """The branch keys' table (KEY_STORE_TABLE_NAME). Every function that encrypts or decrypts workspace data
    needs it (`build_services` refuses to start without it); the turn worker and the codec server do not."""
    region: str = "us-east-1"
    endpoint_url: str | None = None
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "workspace-memory-turns"
    model_provider: str = "scripted"
    bedrock_model_id: str | None = None
    automation_base_url: str | None = None
    automation_auth: str = "iam"
    """`iam` (SigV4, on AWS) or `dev:<name>` (the local gateway's bearer, loopback only)."""
    change_feed_bus: str | None = None
    """The change feed's EventBridge bus (CHANGE_FEED_BUS_NAME); only the change-feed function needs it."""
    embedder: Literal["local", "bedrock"] = "local"
    """Where entry vectors come from (EMBEDDER): the model inside the `wordllama` wheel, or Bedrock Titan Text
    Embeddings v2. Vectors name their model, so a switch re-embeds instead of mixing spaces."""
    search_memory_budget: int = Field(default=256 * 1024 * 1024, ge=1024 * 1024)
    """Bytes of warm search indexes one process keeps (SEARCH_MEMORY_BUDGET), all workspaces together."""
    entry_version_cap: int = Field(default=5000, ge=1, le=5000)
    """Stored entry versions per scope (ENTRY_VERSION_CAP, `entries.limits`): the shared ones, and each
    member's private ones. Lower only (a test reaches it); retention's rewrite is sized by 5,000."""
    audit_days: int = Field(default=365, ge=1, le=3650)
    """Days an audit event is kept (AUDIT_RETENTION_DAYS, `store/audit_trail`), whatever the memory's own
    retention: the trail of a change outlives the version it made."""
    local_stack: bool = False
    """WM_LOCAL_STACK=1: the local stack (scripts/localstack), which alone may pin the clock."""
    local_clock_file: str | None = None
    """WM_LOCAL_CLOCK_FILE: the file the local stack's clock reads (`clock.FileClock`)."""

    @model_validator(mode="after")
    def _clock_only_on_the_local_stack(self) -> Settings:
        """A pinned clock would let whoever writes the file move every expiry and rate window: refused at
        cold start anywhere but the local stack, whose AWS endpoint is a loopback one (AWS has none)."""
        if self.local_clock_file is None:
            return self
        endpoint = urlsplit(self.endpoint_url or "").netloc
        if not (self.local_stack and is_loopback_host(endpoint)):
            raise ValueError(
                f"{LOCAL_CLOCK_FILE} is honoured only on the local stack ({LOCAL_STACK_FLAG}=1 and a loopback "
                "AWS_ENDPOINT_URL)"
            )
        return self

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> Settings:
        def opt(name: str) -> str | None:
            return env.get(name) or None

        values = {
            "table_name": env.get("TABLE_NAME", ""),
            "kms_key_id": env.get("KMS_KEY_ID", ""),
            "key_store_table_name": opt("KEY_STORE_TABLE_NAME"),
            "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            "endpoint_url": opt("AWS_ENDPOINT_URL"),
            "temporal_address": env.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
            "temporal_namespace": env.get("TEMPORAL_NAMESPACE", "default"),
            "temporal_task_queue": env.get("TEMPORAL_TASK_QUEUE", "workspace-memory-turns"),
            "model_provider": env.get("MODEL_PROVIDER", "scripted"),
            "bedrock_model_id": opt("BEDROCK_MODEL_ID"),
            "automation_base_url": opt("AUTOMATION_BASE_URL"),
            "automation_auth": env.get("AUTOMATION_AUTH", "iam"),
            "change_feed_bus": opt("CHANGE_FEED_BUS_NAME"),
            "embedder": env.get("EMBEDDER", "local"),
            "search_memory_budget": env.get("SEARCH_MEMORY_BUDGET", 256 * 1024 * 1024),
            "entry_version_cap": env.get("ENTRY_VERSION_CAP", 5000),
            "audit_days": env.get("AUDIT_RETENTION_DAYS", 365),
            "local_stack": env.get(LOCAL_STACK_FLAG) == "1",
            "local_clock_file": opt(LOCAL_CLOCK_FILE),
        }
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{ENV_NAMES.get(str(e['loc'][0]), 'environment') if e['loc'] else 'environment'}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            raise SettingsError(f"settings from the environment: {problems}") from None
