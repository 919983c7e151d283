"""What the page tests share: the page routes' calls and the workspace's items to compare before and after."""

from __future__ import annotations

from typing import Any

import requests

from scripts.localstack.resources import LocalResources
from tests.support import Api, scan_all


def page_path(ws: str, page_id: str | None = None) -> str:
    return f"/v1/workspaces/{ws}/pages" + ("" if page_id is None else f"/{page_id}")


def new_page(api: Api, user: str, ws: str, title: str = "Deploys", **extra: Any) -> dict[str, Any]:
    body = {"category": "topic", "title": title, **extra}
    created = api.call("POST", page_path(ws), user=user, json=body)
    assert created.status_code == 201, created.text
    written: dict[str, Any] = created.json()
    return written


def file(api: Api, user: str, ws: str, page_id: str, entry_id: str, revision: int) -> requests.Response:
    path = f"{page_path(ws, page_id)}/entries/{entry_id}"
    return api.call("PUT", path, user=user, json={"revision": revision})


def unfile(api: Api, user: str, ws: str, page_id: str, entry_id: str, revision: int) -> requests.Response:
    return api.call("DELETE", f"{page_path(ws, page_id)}/entries/{entry_id}?revision={revision}", user=user)


def read(api: Api, user: str, ws: str, page_id: str) -> dict[str, Any]:
    found = api.call("GET", page_path(ws, page_id), user=user)
    assert found.status_code == 200, found.text
    page: dict[str, Any] = found.json()
    return page


def workspace_items(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    """The workspace partition's items, audit events left out (a refusal writes none, a read writes none)."""
    return sorted(
        (i for i in scan_all(resources) if i["pk"]["S"] == f"WS#{ws}" and not i["sk"]["S"].startswith("AUDIT#")),
        key=lambda i: str(i["sk"]["S"]),
    )


def code_of(response: requests.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]
