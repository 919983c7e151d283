"""The MCP server's configuration: validated once, refused whole, naming variables and never their values."""

from __future__ import annotations

import pytest

from mcp_server.config import ConfigError, McpConfig

pytestmark = pytest.mark.unit

BASE = {"WM_API_URL": "http://127.0.0.1:3000", "WM_USER_ID": "u", "WM_WORKSPACE_ID": "w", "WM_KEY_SESSION_ID": "k"}


def test_defaults_to_dev_auth_and_a_conversation_of_its_own() -> None:
    config = McpConfig.from_environ(BASE)
    assert config.auth == "dev"
    assert config.conversation_id.startswith("mcp-")
    assert McpConfig.from_environ(BASE).conversation_id != config.conversation_id
    assert config.ask_timeout_seconds == 120


@pytest.mark.parametrize(
    ("update", "named"),
    [
        ({"WM_KEY_SESSION_ID": ""}, "WM_KEY_SESSION_ID: Field required"),
        ({"WM_AUTH": "jwt"}, "WM_AUTH:"),
        ({"WM_ASK_TIMEOUT_SECONDS": "0"}, "WM_ASK_TIMEOUT_SECONDS:"),
        ({"WM_API_URL": "ftp://127.0.0.1"}, "WM_API_URL must be an http(s) URL"),
        ({"WM_API_URL": "http://api.example.com"}, "WM_API_URL must be a loopback URL"),
        ({"WM_API_URL": "http://127.0.0.1.evil.example:3000"}, "must be a loopback URL"),
        ({"WM_API_URL": "https://api.example.com", "WM_AUTH": "aws"}, "AWS_REGION is required"),
    ],
)
def test_refuses_a_wrong_environment(update: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        McpConfig.from_environ({**BASE, **update})
    assert named in str(refused.value)


def test_aws_auth_takes_any_https_api_and_an_optional_user_token() -> None:
    env = {**BASE, "WM_API_URL": "https://abc.execute-api.eu-west-1.amazonaws.com", "WM_AUTH": "aws"}
    config = McpConfig.from_environ({**env, "AWS_REGION": "eu-west-1"})
    assert (config.auth, config.region, config.user_token) == ("aws", "eu-west-1", None)


def test_a_refusal_never_echoes_a_value() -> None:
    with pytest.raises(ConfigError) as refused:
        McpConfig.from_environ({**BASE, "WM_ASK_TIMEOUT_SECONDS": "secret-looking-value"})
    assert "secret-looking-value" not in str(refused.value)
