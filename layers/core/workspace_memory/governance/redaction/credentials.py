"""Keys and tokens: detect-secrets' plugins where they have one, our patterns for the formats they lack.

detect-secrets' compiled patterns are run with `finditer` so the span is known (the secret's capturing group,
or the whole match when the group is only a prefix such as `ghp`); its `analyze_line`/`verify` are never
called, so nothing is sent to a provider. A token's span runs on over the token characters that follow it:
detect-secrets' patterns fix a length (`sk_live_` + 24), and a longer key must not keep its tail.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from workspace_memory.governance.redaction.normal import NormalText, Spans, lines

_CLOUD_PLUGINS = (
    "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "ibm_cloud_iam.IbmCloudIamDetector",
    "ibm_cos_hmac.IbmCosHmacDetector",
    "softlayer.SoftlayerDetector",
)
_TOKEN_PLUGINS = (
    "artifactory.ArtifactoryDetector",
    "cloudant.CloudantDetector",
    "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "mailchimp.MailchimpDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector",
    "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)

_START = r"(?<![A-Za-z0-9_])"
_OWN_CLOUD = (
    r"AIza[0-9A-Za-z_-]{35}",  # Google API key
    r"GOCSPX-[0-9A-Za-z_-]{28}",  # Google OAuth client secret
    r"ya29\.[0-9A-Za-z_-]{30,}",  # Google OAuth access token
    r"(?:Shared)?AccessKey=([A-Za-z0-9+/]{40,}={0,2})",  # Azure Service Bus / Event Hubs connection strings
)
_OWN_TOKENS = (
    r"sk-ant-[A-Za-z0-9_-]{20,}",  # Anthropic (api03, admin01, ...)
    r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",  # OpenAI project, service-account and admin keys
    r"sk-[A-Za-z0-9]{32,}",  # OpenAI-style keys of other providers (DeepSeek, Moonshot: `sk-` + 32 or more)
    r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained personal access token
    r"glpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+){0,2}",  # GitLab PATs longer than detect-secrets' 50, routable
    r"npm_[A-Za-z0-9]{36}",  # npm access token (detect-secrets finds it only in an .npmrc line)
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}",  # Stripe keys of any length, test mode included
    r"whsec_[A-Za-z0-9+/]{24,}",  # Stripe webhook signing secret
    r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+",  # Slack app-level token
    r"xox[abposre]-[A-Za-z0-9-]{16,}",  # Slack tokens without detect-secrets' digit groups
    r"dop_v1_[a-f0-9]{64}",  # DigitalOcean
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    r"dapi[a-f0-9]{32}",  # Databricks
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",  # Grafana service account
    r"lin_api_[A-Za-z0-9]{40}",  # Linear
    r"ATATT3[A-Za-z0-9_=-]{60,}",  # Atlassian API token
)
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")

_EDGE = " \t\n\"'`=:"
_EDGE_END = " \t\n\"'`"
"""Delimiters some plugins' patterns include around the secret: trimmed so the marker replaces only it (not
a trailing `=`, which is a base64 secret's padding)."""

_MIN_GROUP = 8
"""A capturing group shorter than this is a prefix (`ghp` of a GitHub token), not the secret itself."""


def plugin(path: str) -> Any:
    """A detect-secrets plugin class, imported on first use (not at a handler's cold start)."""
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)


@cache
def patterns(paths: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The plugins' patterns, collected once per process; multi-line, so one pass reads the whole text and a
    `^` or `$` still means a line's start or end, as detect-secrets reads them."""
    return tuple(re.compile(p.pattern, p.flags | re.MULTILINE) for path in paths for p in plugin(path).denylist)


@cache
def _own(sources: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Our patterns as one alternation: one pass over the text, not one per provider."""
    return (re.compile(_START + "(?:" + "|".join(sources) + ")"),)


def regex_spans(found: Iterable[re.Pattern[str]], text: NormalText, *, tail: bool = False) -> Spans:
    """Where the patterns match: the secret's capturing group when it has one, else the match; with `tail`,
    run on over the token characters that follow (a pattern's fixed length is not the key's)."""
    for pattern in found:
        for match in pattern.finditer(text):
            groups = [match.span(i) for i in range(1, (match.re.groups or 0) + 1) if match.group(i)]
            start, end = max(groups, key=lambda g: g[1] - g[0], default=match.span())
            if end - start < _MIN_GROUP:
                start, end = match.span()
            while start < end and text[start] in _EDGE:
                start += 1
            while end > start and text[end - 1] in _EDGE_END:
                end -= 1
            if tail and end == match.end():
                after = _TOKEN_TAIL.match(text, end)
                end = after.end() if after else end
            if start < end:
                yield start, end


_AWS_SECRET = re.compile(
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
_AWS_CONTEXT = re.compile(r"(?i)aws|amazon|secret|access[ _-]?key|AKIA|ASIA")
_CONTEXT_CHARS = 80


def _aws_secret_keys(text: NormalText) -> Spans:
    """An AWS secret access key in prose: 40 characters of base64 with both cases, near a word that says so
    (`aws`, `secret`, `access key`, a key id). Lower-case hex (a commit hash) never has both cases."""
    for offset, line in lines(text):
        if not _AWS_CONTEXT.search(line):
            continue
        for match in _AWS_SECRET.finditer(line):
            if _AWS_CONTEXT.search(line, max(0, match.start() - _CONTEXT_CHARS), match.start()):
                yield offset + match.start(), offset + match.end()


def cloud_keys(text: NormalText) -> Spans:
    yield from regex_spans(patterns(_CLOUD_PLUGINS), text, tail=True)
    yield from regex_spans(_own(_OWN_CLOUD), text, tail=True)
    yield from _aws_secret_keys(text)


def api_tokens(text: NormalText) -> Spans:
    yield from regex_spans(patterns(_TOKEN_PLUGINS), text, tail=True)
    yield from regex_spans(_own(_OWN_TOKENS), text, tail=True)


_KEY_BEGIN = re.compile(r"BEGIN [A-Z0-9 ]*PRIVATE KEY")
"""Any armoured private key (`ENCRYPTED PRIVATE KEY`, `PUTTY …`): detect-secrets lists seven labels."""
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*-----")
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z-]*: .*")


def private_keys(text: NormalText) -> Spans:
    """The whole block: detect-secrets finds its `BEGIN … PRIVATE KEY` line; the block runs to its END line,
    or, without one, over the lines that look like its body (base64 and `Header: value` lines)."""
    for pattern in (*patterns(("private_key.PrivateKeyDetector",)), _KEY_BEGIN):
        for match in pattern.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] == "-":
                start -= 1
            end_marker = _KEY_END.search(text, match.end())
            if end_marker is not None:
                yield start, end_marker.end()
                continue
            end = text.find("\n", match.end())
            while end != -1:
                following = text.find("\n", end + 1)
                line = text[end + 1 : len(text) if following == -1 else following].strip()
                if not _KEY_BODY_LINE.fullmatch(line):
                    break
                end = following
            yield start, len(text) if end == -1 else end


_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.]*")


def jwts(text: NormalText) -> Spans:
    """detect-secrets' JWT pattern and validity check; its pattern stops before the signature, so the span
    runs on over the signature's characters (a sentence's final period excepted)."""
    detector = plugin("jwt.JwtTokenDetector")
    for pattern in patterns(("jwt.JwtTokenDetector",)):
        for match in pattern.finditer(text):
            if not detector.is_formally_valid(match.group()):
                continue
            tail = _JWT_TAIL.match(text, match.end())
            end = tail.end() if tail else match.end()
            while end > match.start() and text[end - 1] == ".":
                end -= 1
            yield match.start(), end


_BEARER = re.compile(r"(?i:\bbearer)[ \t]+([A-Za-z0-9\-._~+/]{20,}=*)")
"""RFC 6750's token68 after `Bearer`; at least 20 characters, so prose ("bearer of news") is not a token."""


def bearer_tokens(text: NormalText) -> Spans:
    return (match.span(1) for match in _BEARER.finditer(text))
