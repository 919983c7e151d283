"""Helpers shared by the integration tests."""

from __future__ import annotations

import io
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import requests

from scripts.localstack.resources import LocalResources


class Api:
    """A tiny HTTP client speaking the local gateway's dev auth."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = requests.Session()

    def call(
        self,
        method: str,
        path: str,
        *,
        user: str | None = None,
        automation: str | None = None,
        json: Any = None,
        data: str | bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> requests.Response:
        hdrs = dict(headers or {})
        if user is not None:
            hdrs["Authorization"] = f"Bearer dev:{user}"
        if automation is not None:
            hdrs["Authorization"] = f"Bearer automation:{automation}"
        return requests.request(method, self.base + path, json=json, data=data, headers=hdrs, timeout=60)

    def workspace(self, owner: str, share_type: str = "shared") -> str:
        response = self.call("POST", "/v1/workspaces", user=owner, json={"name": "team", "shareType": share_type})
        assert response.status_code == 201, response.text
        workspace_id: str = response.json()["workspaceId"]
        return workspace_id

    def add_member(self, owner: str, ws: str, user: str, role: str) -> None:
        response = self.call("PUT", f"/v1/workspaces/{ws}/members/{user}", user=owner, json={"role": role})
        assert response.status_code == 200, response.text

    def save(self, user: str, ws: str, content: str, base: int | str) -> requests.Response:
        return self.call(
            "PUT",
            f"/v1/workspaces/{ws}/memory",
            user=user,
            json={"content": content},
            headers={"X-Base-Version": str(base)},
        )

    def undo(self, user: str, ws: str, restore: int, base: int) -> requests.Response:
        return self.call(
            "POST",
            f"/v1/workspaces/{ws}/memory/undo",
            user=user,
            json={"restoreVersion": restore},
            headers={"X-Base-Version": str(base)},
        )

    def clear(self, user: str, ws: str, base: int) -> requests.Response:
        return self.call("POST", f"/v1/workspaces/{ws}/memory/clear", user=user, headers={"X-Base-Version": str(base)})

    def key_session(self, user: str, ws: str, scopes: list[str] | None = None) -> str:
        """A key session `user` opens in `ws` (all scopes unless given): what automation admits under."""
        body: dict[str, Any] = {} if scopes is None else {"scopes": scopes}
        response = self.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=user, json=body)
        assert response.status_code == 201, response.text
        key_session_id: str = response.json()["keySessionId"]
        return key_session_id

    def read(self, user: str, ws: str) -> dict[str, Any]:
        response = self.call("GET", f"/v1/workspaces/{ws}/memory", user=user)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


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
def captured_service_logs() -> Iterator[io.StringIO]:
    """The service's structured log lines, formatted exactly as Lambda would ship them."""
    from workspace_memory.api.http import logger

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger._logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger._logger.removeHandler(handler)
