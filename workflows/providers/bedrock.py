"""Amazon Bedrock provider over the Converse API.

The boto3 `bedrock-runtime` client is injected, never built here, so credentials, region, retry
configuration and endpoint (real AWS, a stub in tests) stay the caller's decision.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from workflows.providers.base import (
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    StopReason,
    ToolCall,
    ToolResult,
    ToolSpec,
)

# Error codes where trying again later can succeed. ModelTimeoutException is included because
# Bedrock documents it as transient (the same request may finish in time on a retry).
RETRYABLE_ERROR_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)

# The model produced something unusable; sampling again may not, so the caller should retry.
_RETRYABLE_STOP_REASONS = frozenset({"malformed_model_output", "malformed_tool_use"})
_MAX_TOKENS_STOP_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})

# Converse rejects blank text blocks; an empty tool output must still be reported, so it gets a
# visible placeholder rather than failing the whole request.
_EMPTY_TOOL_OUTPUT = "(empty)"


class BedrockProvider:
    """Runs one model round as one `converse` call."""

    def __init__(self, client: Any, model_id: str, max_tokens: int = 1024) -> None:
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self._client = client
        self._model_id = model_id
        self._max_tokens = max_tokens

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Call Converse and map the reply; failures become `ModelError` with a retry verdict."""
        try:
            response = self._client.converse(**self.build_params(request))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "Unknown")
            raise ModelError(
                f"Bedrock converse failed: {code}: {error.get('Message', '')}",
                retryable=code in RETRYABLE_ERROR_CODES,
                code=code,
            ) from exc
        except (BotoConnectionError, HTTPClientError) as exc:
            # Connection refused/reset and timeouts: the network, not the request, is at fault.
            raise ModelError(f"Bedrock unreachable: {exc}", retryable=True, code=type(exc).__name__) from exc
        except BotoCoreError as exc:
            # Client-side problems (parameter validation, missing credentials) will not heal.
            raise ModelError(f"Bedrock call failed: {exc}", retryable=False, code=type(exc).__name__) from exc
        return parse_response(response)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The exact keyword arguments for `client.converse` (public so it can be inspected)."""
        params: dict[str, Any] = {
            "modelId": self._model_id,
            "messages": to_converse_messages(request.messages),
            "inferenceConfig": {"maxTokens": self._max_tokens},
        }
        if request.system_prompt.strip():
            params["system"] = [{"text": request.system_prompt}]
        if request.tools:
            params["toolConfig"] = {"tools": [_tool_spec(tool) for tool in request.tools]}
        return params


def _tool_spec(tool: ToolSpec) -> dict[str, Any]:
    return {
        "toolSpec": {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": tool.input_schema},
        }
    }


def to_converse_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Map our conversation to Converse messages.

    Tool results travel as a user-role message, and Converse requires roles to alternate, so
    adjacent messages that map to the same role are merged (e.g. tool results followed by a new
    user message). Blank text is dropped because Converse rejects blank text blocks.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _content_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _content_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [_tool_result_block(result) for result in message.tool_results]
    if message.text.strip():
        blocks.append({"text": message.text})
    blocks.extend(
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}} for call in message.tool_calls
    )
    return blocks


def _tool_result_block(result: ToolResult) -> dict[str, Any]:
    return {
        "toolResult": {
            "toolUseId": result.tool_call_id,
            "content": [{"text": result.content if result.content.strip() else _EMPTY_TOOL_OUTPUT}],
            "status": "error" if result.is_error else "success",
        }
    }


def parse_response(response: dict[str, Any]) -> ModelResponse:
    """Map a Converse response to `ModelResponse`.

    The stop reason is derived from the content first: any tool call means `tool_use`, so the caller
    never drops requested calls whatever Bedrock reports.
    """
    raw_stop = str(response.get("stopReason", "end_turn"))
    if raw_stop in _RETRYABLE_STOP_REASONS:
        raise ModelError(f"Bedrock model output unusable: {raw_stop}", retryable=True, code=raw_stop)
    content = response.get("output", {}).get("message", {}).get("content", [])
    texts = [block["text"] for block in content if "text" in block]
    calls = [_tool_call(block["toolUse"]) for block in content if "toolUse" in block]
    stop: StopReason
    if calls:
        stop = "tool_use"
    elif raw_stop in _MAX_TOKENS_STOP_REASONS:
        stop = "max_tokens"
    else:
        stop = "end_turn"
    return ModelResponse(text="\n".join(texts), tool_calls=calls, stop_reason=stop)


def _tool_call(block: dict[str, Any]) -> ToolCall:
    raw_input = block.get("input")
    if raw_input is None:
        arguments: dict[str, Any] = {}
    elif isinstance(raw_input, dict):
        arguments = raw_input
    else:
        # Not an object: hand it to the tool as-is so its validation error reaches the model.
        arguments = {"input": raw_input}
    return ToolCall(id=block["toolUseId"], name=block["name"], arguments=arguments)
