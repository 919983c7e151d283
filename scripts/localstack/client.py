"""HTTP against the local gateway, speaking its dev auth: the tests' `Api` and the demo's transcript use it."""

from __future__ import annotations

from typing import Any

import requests


def dev_headers(
    user: str | None = None, automation: str | None = None, headers: dict[str, str] | None = None
) -> dict[str, str]:
    """`headers` with the dev credential: `Bearer dev:<user>` (JWT routes) or `Bearer automation:<name>` (IAM)."""
    out = dict(headers or {})
    if user is not None:
        out["Authorization"] = f"Bearer dev:{user}"
    if automation is not None:
        out["Authorization"] = f"Bearer automation:{automation}"
    return out


class DevClient:
    """A tiny HTTP client for the local gateway at `base` (e.g. http://127.0.0.1:3000)."""

    def __init__(self, base: str, timeout: float = 60.0) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout

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
        hdrs = dev_headers(user, automation, headers)
        return requests.request(method, self.base + path, json=json, data=data, headers=hdrs, timeout=self.timeout)

    def healthy(self, timeout: float = 2.0) -> bool:
        """Whether `GET /v1/health` answers 200 within `timeout` seconds."""
        try:
            return requests.get(f"{self.base}/v1/health", timeout=timeout).status_code == 200
        except (requests.RequestException, ValueError):
            return False
