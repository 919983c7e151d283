"""Helpers shared by the integration tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import boto3
import requests

from scripts.localstack.client import DevClient
from scripts.localstack.resources import LocalResources
from workflows.codec_server import CodecHTTPServer
from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.store.keys import Key
from workspace_memory.store.ports import Cipher, Table

RUNTIME = "agent-runtime"
"""The automation caller the integration tests' agent runtime signs as (`Bearer automation:<name>` locally)."""
ALL_SCOPE_NAMES = ("memory:read", "memory:write", "notes")
"""What `Api.key_session` asks for unless told: every scope, named (the service's own default is `memory:read`)."""


class Api(DevClient):
    """The local gateway's dev-auth client, with the steps the integration tests take again and again."""

    def workspace(self, owner: str, share_type: str = "shared") -> str:
        response = self.call("POST", "/v1/workspaces", user=owner, json={"name": "team", "shareType": share_type})
        assert response.status_code == 201, response.text
        workspace_id: str = response.json()["workspaceId"]
        return workspace_id

    def add_member(self, owner: str, ws: str, user: str, role: str) -> None:
        response = self.call("PUT", f"/v1/workspaces/{ws}/members/{user}", user=owner, json={"role": role})
        assert response.status_code == 200, response.text

    def _on_base(self, method: str, path: str, user: str, base: int | str, json: Any = None) -> requests.Response:
        """A memory write made against version `base` (the X-Base-Version header)."""
        return self.call(method, path, user=user, json=json, headers={"X-Base-Version": str(base)})

    def save(self, user: str, ws: str, content: str, base: int | str) -> requests.Response:
        return self._on_base("PUT", f"/v1/workspaces/{ws}/memory", user, base, {"content": content})

    def undo(self, user: str, ws: str, restore: int, base: int) -> requests.Response:
        return self._on_base("POST", f"/v1/workspaces/{ws}/memory/undo", user, base, {"restoreVersion": restore})

    def clear(self, user: str, ws: str, base: int) -> requests.Response:
        return self._on_base("POST", f"/v1/workspaces/{ws}/memory/clear", user, base)

    def supersede(self, user: str, ws: str, entry_id: str, body: dict[str, Any], base: int) -> None:
        """A new revision of an entry, made against revision `base` (the X-Base-Revision header)."""
        path = f"/v1/workspaces/{ws}/entries/{entry_id}"
        response = self.call("PUT", path, user=user, json=body, headers={"X-Base-Revision": str(base)})
        assert response.status_code == 200, response.text

    def key_session(self, user: str, ws: str, scopes: Sequence[str] | None = ALL_SCOPE_NAMES) -> str:
        """A key session `user` opens in `ws`, asking for all three scopes unless given (None: asks for none, the
        service's default, `memory:read`): what automation admits under."""
        body: dict[str, Any] = {} if scopes is None else {"scopes": list(scopes)}
        response = self.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=user, json=body)
        assert response.status_code == 201, response.text
        key_session_id: str = response.json()["keySessionId"]
        return key_session_id

    def admit(
        self,
        conv: str,
        ws: str,
        user: str,
        key_session: str | None,
        *,
        key: str | None = None,
        automation: str = RUNTIME,
        **extra: Any,
    ) -> requests.Response:
        """An agent runtime's admission request for `user` in conversation `conv`, under the key session `user`
        opened (None: sent without one), with a fresh idempotency key unless `key`; `extra` adds body fields
        (`sessionId=`, `message=`, `memoryState=`). The answer as it is: a test of refusals reads it."""
        idempotency_key = uuid.uuid4().hex if key is None else key
        body: dict[str, Any] = {"workspaceId": ws, "userId": user, "idempotencyKey": idempotency_key, **extra}
        if key_session is not None:
            body["keySessionId"] = key_session
        return self.call("POST", f"/v1/automation/conversations/{conv}/admissions", automation=automation, json=body)

    def read(self, user: str, ws: str) -> dict[str, Any]:
        response = self.call("GET", f"/v1/workspaces/{ws}/memory", user=user)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


def admission_headers(admission: dict[str, Any]) -> dict[str, str]:
    """The headers an admitted turn's tools send: its admission id and delivery credential."""
    return {"X-Admission-Id": admission["admissionId"], "X-Delivery-Credential": admission["credential"]}


def new_user(prefix: str = "user") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def scan_all(resources: LocalResources) -> list[dict[str, Any]]:
    """Every item of the table in wire form (attribute-typed), for byte-level plaintext checks."""
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": resources.table_name}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _delete_keys(client: Any, table: str, keys: list[dict[str, Any]]) -> None:
    for start in range(0, len(keys), 25):
        deletes: list[Any] = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
        client.batch_write_item(RequestItems={table: deletes})


def drop_partition(resources: LocalResources, pk: str) -> None:
    """Delete every item of one partition: a test that stores megabytes cleans up after itself, or every later
    `scan_all` of the shared table (moto serializes each item it returns) pays for them."""
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    while page := client.query(
        TableName=resources.table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
        ProjectionExpression="pk, sk",
    )["Items"]:
        _delete_keys(client, resources.table_name, page)


def empty_table(resources: LocalResources) -> int:
    """Delete every item of the service's table (not the branch-key store): how many there were. Between test
    modules, so a whole-table `scan_all` costs what one module stored, not what the session did."""
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    deleted = 0
    while page := client.scan(TableName=resources.table_name, ProjectionExpression="pk, sk")["Items"]:
        _delete_keys(client, resources.table_name, page)
        deleted += len(page)
    return deleted


def item_bytes(item: Any) -> bytes:
    """All bytes of an item (strings UTF-8, binaries raw), so a marker cannot hide in any attribute."""
    if isinstance(item, dict):
        return b"".join(item_bytes(k) + item_bytes(v) for k, v in item.items())
    if isinstance(item, list | tuple | set):
        return b"".join(item_bytes(v) for v in item)
    if isinstance(item, bytes | bytearray):
        return bytes(item)
    return str(item).encode("utf-8")


@contextmanager
def serving_codec(cipher: Cipher) -> Iterator[str]:
    """The codec server for `cipher` on a loopback port of its own, in a thread, while the block runs: its URL."""
    codec = data_converter(cipher).payload_codec
    assert codec is not None
    server = CodecHTTPServer(codec, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def graft_ciphertext(table: Table, source: Key, target: Key, **extra: Any) -> None:
    """Overwrite the stored item at `target` with the ciphertext of the one at `source` (and `extra` fields): a
    ciphertext moved to a slot it was not encrypted for."""
    moved = table.get(*source)
    slot = table.get(*target)
    assert moved is not None
    assert slot is not None
    table.put({**slot, "ciphertext": moved["ciphertext"], **extra})


class FunctionLogs:
    """The local stack's function log: what every execution environment process writes to stdout and stderr
    (the handlers' structured lines, exactly as Lambda ships them), appended to one file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def captured(self) -> Iterator[LogTail]:
        """What the functions log while the block runs. A handler writes its lines unbuffered before it
        answers, so every line of a request whose response has arrived is already in the file."""
        tail = LogTail(self.path, self._size())
        try:
            yield tail
        finally:
            tail.end = self._size()

    def _size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


@dataclass
class LogTail:
    path: Path
    start: int
    end: int | None = None

    def getvalue(self) -> str:
        with self.path.open("rb") as log:
            log.seek(self.start)
            data = log.read() if self.end is None else log.read(self.end - self.start)
        return data.decode("utf-8", errors="replace")


def dev_stack_environment(
    state_dir: Path, moto: int, gateway: int, temporal: int, ui: int | None, codec: int | None = None
) -> dict[str, str]:
    """The environment of a child that starts `make dev`'s stack (`python -m scripts.localstack`, the demo) on
    the given ports (`ui` None: no Temporal UI; `codec` None: no codec server): this process's, without what
    the session's stack set here for the in-process handlers, nor an explicit API."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "AUTOMATION_")) and k != "API"}
    env.update(
        MOTO_PORT=str(moto),
        GATEWAY_PORT=str(gateway),
        TEMPORAL_PORT=str(temporal),
        TEMPORAL_UI_PORT="off" if ui is None else str(ui),
        CODEC_PORT="off" if codec is None else str(codec),
        LOCAL_STATE_DIR=str(state_dir),
        PYTHONUNBUFFERED="1",
    )
    return env


def spawn(module: str, env: dict[str, str], stderr: int | IO[str]) -> subprocess.Popen[str]:
    """`python -m <module>` from the repository's root with `env`, its stdout a text pipe, no stdin."""
    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, "-m", module]
    return subprocess.Popen(
        command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, text=True
    )


def refuses(port: int) -> bool:
    """Whether nothing accepts connections on 127.0.0.1:`port` (a stopped stack left nothing behind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) != 0
