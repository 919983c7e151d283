"""Model providers behind one small interface (`ModelProvider.complete`).

`build_provider` is the one place a provider is chosen: the offline scripted provider or Bedrock, by
configuration, and nothing else depends on which. Importing this package stays light (pydantic only):
workflow code can use the payload models without pulling botocore into the Temporal workflow sandbox;
each provider's module is imported only when it is asked for.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from workflows.providers.base import (
    MEMORY_HEADING,
    NOTES_CLOSE,
    NOTES_HEADING,
    NOTES_OPEN,
    Message,
    ModelError,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from workspace_memory.kernel.settings import Settings

__all__ = [
    "MEMORY_HEADING",
    "NOTES_CLOSE",
    "NOTES_HEADING",
    "NOTES_OPEN",
    "Message",
    "ModelError",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ProviderName",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "build_provider",
]


class ProviderName(StrEnum):
    """The values of `MODEL_PROVIDER` (`Settings.model_provider`), case and surrounding blanks ignored."""

    SCRIPTED = "scripted"
    BEDROCK = "bedrock"


def build_provider(settings: Settings, *, bedrock_client: Any = None) -> ModelProvider:
    """The provider `settings.model_provider` names.

    Bedrock needs a model id (`BEDROCK_MODEL_ID`); its `bedrock-runtime` client is built for the
    settings' region unless one is injected. A missing model id or an unknown provider is a configuration
    error raised here, at startup, rather than on the first model call.
    """
    try:
        name = ProviderName(settings.model_provider.strip().lower())
    except ValueError:
        expected = " or ".join(repr(p.value) for p in ProviderName)
        raise ValueError(f"unknown model provider {settings.model_provider!r} (expected {expected})") from None
    if name is ProviderName.SCRIPTED:
        from workflows.providers.scripted import ScriptedProvider

        return ScriptedProvider()
    from workflows.providers.bedrock import BedrockProvider  # lazy: keeps botocore out of plain imports

    if not settings.bedrock_model_id:
        raise ValueError("the bedrock provider needs BEDROCK_MODEL_ID")
    if bedrock_client is None:
        import boto3

        bedrock_client = boto3.client("bedrock-runtime", region_name=settings.region)
    return BedrockProvider(bedrock_client, settings.bedrock_model_id)
