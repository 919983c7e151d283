"""The local servers over real sockets answer only to a loopback `Host` (docs/architecture.md#local-servers: DNS
rebinding).

A page on `http://attacker.com:3000` whose name the attacker re-points at 127.0.0.1 talks to the local
servers as a same-origin page, so its requests carry `Host: attacker.com:3000`. Each server (gateway, moto,
codec server) must refuse those with 421 `HOST_NOT_ALLOWED` and change nothing, while the very same
request addressed to `127.0.0.1:<port>` or `localhost:<port>` works.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from google.protobuf.json_format import MessageToDict

from scripts.localstack.resources import LocalResources
from tests.support import item_bytes, scan_all, serving_codec
from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.bootstrap import Services

pytestmark = pytest.mark.integration

UI = "http://localhost:8233"

# `{port}` is the server's own port: a rebinding page reaches it under its own name and that port.
FOREIGN = [
    ["evil.example"],
    ["attacker.com:3000"],
    ["attacker.com:{port}"],
    ["localhost.evil.example:{port}"],
    ["127.0.0.1.nip.io:{port}"],
    ["127.0.0.1:{port}", "evil.example"],  # two Host fields: one loopback is not enough
    [],  # no Host at all
]
LOOPBACK = ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def send(
    base_url: str,
    method: str,
    target: str,
    hosts: list[str],
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Reply:
    """One request with exactly the given `Host` fields (`{port}` filled in), over a fresh connection."""
    url = urlsplit(base_url)
    assert url.hostname is not None
    assert url.port is not None
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for host in hosts:
            conn.putheader("Host", host.format(port=url.port))
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()


def assert_refused(reply: Reply) -> None:
    assert reply.status == 421, reply.body
    assert reply.json()["error"]["code"] == "HOST_NOT_ALLOWED"
    assert not any(name.startswith("access-control-") for name in reply.headers)


def table_mentions(resources: LocalResources, text: str) -> bool:
    """Whether any item of the table holds `text` anywhere (keys or attributes)."""
    return any(text.encode() in item_bytes(item) for item in scan_all(resources))


# --- the gateway ----------------------------------------------------------------------------------------


def _create_workspace(gateway_url: str, hosts: list[str], user: str, target: str = "/v1/workspaces") -> Reply:
    return send(
        gateway_url,
        "POST",
        target,
        hosts,
        {
            "Authorization": f"Bearer dev:{user}",
            "Content-Type": "application/json",
            "Origin": "http://attacker.com:3000",  # what the rebinding page's fetch would send along
        },
        json.dumps({"name": "rebound", "shareType": "private"}).encode(),
    )


@pytest.mark.parametrize("hosts", FOREIGN)
def test_gateway_refuses_a_foreign_host_and_creates_nothing(
    gateway_url: str, resources: LocalResources, hosts: list[str]
) -> None:
    user = f"rebind-{uuid.uuid4().hex}"
    assert_refused(_create_workspace(gateway_url, hosts, user))
    assert not table_mentions(resources, user)


def test_gateway_refuses_a_foreign_absolute_form_target(gateway_url: str, resources: LocalResources) -> None:
    user = f"rebind-{uuid.uuid4().hex}"
    reply = _create_workspace(gateway_url, ["127.0.0.1:{port}"], user, "http://evil.example/v1/workspaces")
    assert_refused(reply)
    assert not table_mentions(resources, user)


@pytest.mark.parametrize("method", ["GET", "OPTIONS", "HEAD"])
def test_gateway_refuses_a_foreign_host_whatever_the_method(gateway_url: str, method: str) -> None:
    reply = send(gateway_url, method, "/v1/health", ["attacker.com:3000"])
    assert reply.status == 421
    if method != "HEAD":
        assert reply.json()["error"]["code"] == "HOST_NOT_ALLOWED"


@pytest.mark.parametrize("host", LOOPBACK)
def test_gateway_serves_a_loopback_host(gateway_url: str, resources: LocalResources, host: str) -> None:
    user = f"local-{uuid.uuid4().hex}"
    reply = _create_workspace(gateway_url, [host], user)
    assert reply.status == 201, reply.body
    assert reply.json()["workspaceId"]
    assert table_mentions(resources, user)  # the same check that saw nothing above does see a write


# --- the moto server ------------------------------------------------------------------------------------


def _signed_put_item(resources: LocalResources, marker: str) -> tuple[dict[str, str], bytes]:
    """A SigV4-signed DynamoDB PutItem, as boto3 would send it (moto routes it by the signature's scope)."""
    body = json.dumps(
        {
            "TableName": resources.table_name,
            "Item": {"pk": {"S": f"HOSTPROBE#{marker}"}, "sk": {"S": "probe"}, "note": {"S": marker}},
        }
    ).encode()
    request = AWSRequest(
        method="POST",
        url=resources.endpoint_url + "/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.PutItem"},
    )
    credentials = boto3.Session().get_credentials()
    assert credentials is not None
    SigV4Auth(credentials, "dynamodb", "us-east-1").add_auth(request)
    headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
    return headers, body


def _probe_exists(resources: LocalResources, marker: str) -> bool:
    ddb = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    item = ddb.get_item(TableName=resources.table_name, Key={"pk": {"S": f"HOSTPROBE#{marker}"}, "sk": {"S": "probe"}})
    return "Item" in item


@pytest.mark.parametrize("hosts", FOREIGN)
def test_moto_refuses_a_foreign_host_and_writes_nothing(resources: LocalResources, hosts: list[str]) -> None:
    marker = uuid.uuid4().hex
    headers, body = _signed_put_item(resources, marker)
    reply = send(resources.endpoint_url, "POST", "/", hosts, headers, body)
    assert reply.status == 421, reply.body
    assert not _probe_exists(resources, marker)


@pytest.mark.parametrize("host", LOOPBACK)
def test_moto_serves_a_loopback_host(resources: LocalResources, host: str) -> None:
    marker = uuid.uuid4().hex
    headers, body = _signed_put_item(resources, marker)
    reply = send(resources.endpoint_url, "POST", "/", [host], headers, body)
    assert reply.status == 200, reply.body
    assert _probe_exists(resources, marker)


def test_boto3_through_localhost_still_works(resources: LocalResources) -> None:
    """boto3 signs the `Host` it sends; the guard only reads it, so both loopback spellings work."""
    port = urlsplit(resources.endpoint_url).port
    for endpoint in (resources.endpoint_url, f"http://localhost:{port}"):
        ddb = boto3.client("dynamodb", endpoint_url=endpoint)
        assert ddb.describe_table(TableName=resources.table_name)["Table"]["TableStatus"] == "ACTIVE"
        kms = boto3.client("kms", endpoint_url=endpoint)
        assert kms.describe_key(KeyId=resources.kms_key_arn)["KeyMetadata"]["Enabled"]


# --- the codec server -----------------------------------------------------------------------------------


@pytest.fixture
def codec_url(svc: Services) -> Iterator[str]:
    with serving_codec(svc.cipher) as url:
        yield url


@pytest.fixture
def secret(svc: Services) -> tuple[str, bytes]:
    """A marker and a decode request body holding it encrypted."""
    marker = f"HOST-MARKER-{uuid.uuid4().hex}"
    payloads = asyncio.run(data_converter(svc.cipher).encode([marker]))
    return marker, json.dumps({"payloads": [MessageToDict(p) for p in payloads]}).encode()


@pytest.mark.parametrize("origin", [UI, "http://attacker.com:8888", None])
@pytest.mark.parametrize("hosts", FOREIGN)
def test_codec_server_refuses_a_foreign_host_and_decrypts_nothing(
    codec_url: str, secret: tuple[str, bytes], hosts: list[str], origin: str | None
) -> None:
    marker, body = secret
    headers = {"Content-Type": "application/json", **({"Origin": origin} if origin else {})}
    preflight = send(codec_url, "OPTIONS", "/decode", hosts, {"Origin": origin or UI})
    assert_refused(preflight)
    reply = send(codec_url, "POST", "/decode", hosts, headers, body)
    assert_refused(reply)
    assert marker.encode() not in reply.body


@pytest.mark.parametrize("host", LOOPBACK)
def test_codec_server_serves_a_loopback_host(codec_url: str, secret: tuple[str, bytes], host: str) -> None:
    marker, body = secret
    preflight = send(codec_url, "OPTIONS", "/decode", [host], {"Origin": UI})
    assert preflight.status == 204
    assert preflight.headers["access-control-allow-origin"] == UI
    reply = send(codec_url, "POST", "/decode", [host], {"Content-Type": "application/json", "Origin": UI}, body)
    assert reply.status == 200, reply.body
    [plain] = reply.json()["payloads"]
    assert base64.b64decode(plain["data"]) == json.dumps(marker).encode()


@pytest.mark.parametrize("origin", ["http://attacker.com:8888", "http://localhost:3000", "null"])
def test_codec_server_cors_allows_the_local_ui_only(codec_url: str, secret: tuple[str, bytes], origin: str) -> None:
    """A loopback Host is not enough from a browser: only the Temporal UI's origin may call, never `*`."""
    marker, body = secret
    preflight = send(codec_url, "OPTIONS", "/decode", ["127.0.0.1:{port}"], {"Origin": origin})
    assert preflight.status == 403
    assert "access-control-allow-origin" not in preflight.headers
    reply = send(codec_url, "POST", "/decode", ["127.0.0.1:{port}"], {"Origin": origin}, body)
    assert reply.status == 403
    assert marker.encode() not in reply.body
