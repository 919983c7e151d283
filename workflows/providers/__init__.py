"""Model providers behind one small interface (`ModelProvider.complete`).

`build_provider` is the single switch between the offline scripted provider and Bedrock, so the
worker picks one by configuration and nothing else depends on which. Importing this package stays
light (pydantic only): workflow code can use the payload models without pulling botocore into the
Temporal workflow sandbox; `BedrockProvider` lives in `workflows.providers.bedrock` and is imported
only when asked for.
"""

from __future__ import annotations

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
from workflows.providers.scripted import ScriptedProvider

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
    "ScriptedProvider",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "build_provider",
]


def build_provider(name: str, *, bedrock_client: Any = None, model_id: str | None = None) -> ModelProvider:
    """Return the provider called `name` ("scripted" or "bedrock").

    Bedrock needs an injected `bedrock-runtime` client and a model id; missing either is a
    configuration error raised here, at startup, rather than on the first model call.
    """
    key = name.strip().lower()
    if key == "scripted":
        return ScriptedProvider()
    if key == "bedrock":
        from workflows.providers.bedrock import BedrockProvider  # lazy: keeps botocore out of plain imports

        if bedrock_client is None or not model_id:
            raise ValueError("the bedrock provider needs bedrock_client and model_id")
        return BedrockProvider(bedrock_client, model_id)
    raise ValueError(f"unknown model provider {name!r} (expected 'scripted' or 'bedrock')")
