"""Bad input gets a clear error with a stable code, and the stored state is unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import Api, new_user
from workspace_memory.api.body import MAX_BODY_BYTES
from workspace_memory.document.versions import MAX_DOCUMENT_BYTES

pytestmark = pytest.mark.integration


@pytest.fixture
def seeded(api: Api) -> tuple[str, str, dict[str, Any], list[dict[str, Any]]]:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n- stable\n", 0).status_code == 200
    return owner, ws, api.read(owner, ws), _state(api, owner, ws)


def _state(api: Api, owner: str, ws: str) -> list[dict[str, Any]]:
    return [
        api.read(owner, ws),
        api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json(),
        api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json(),
    ]


CASES = [
    ("invalid json", "PUT", "memory", {"X-Base-Version": "1"}, b'{"content": ', 400, "INVALID_REQUEST"),
    (
        "unknown field",
        "PUT",
        "memory",
        {"X-Base-Version": "1"},
        b'{"content": "x", "extra": 1}',
        400,
        "INVALID_REQUEST",
    ),
    ("content not a string", "PUT", "memory", {"X-Base-Version": "1"}, b'{"content": 5}', 400, "INVALID_REQUEST"),
    (  # JSON can spell a lone surrogate, which no UTF-8 text holds
        "content with a lone surrogate",
        "PUT",
        "memory",
        {"X-Base-Version": "1"},
        b'{"content": "a \\ud800 b"}',
        400,
        "INVALID_REQUEST",
    ),
    ("negative base", "PUT", "memory", {"X-Base-Version": "-1"}, b'{"content": "x"}', 400, "INVALID_REQUEST"),
    ("non-numeric base", "PUT", "memory", {"X-Base-Version": "one"}, b'{"content": "x"}', 400, "INVALID_REQUEST"),
    ("missing base", "PUT", "memory", {}, b'{"content": "x"}', 428, "BASE_VERSION_REQUIRED"),
    ("clear missing base", "POST", "memory/clear", {}, b"", 428, "BASE_VERSION_REQUIRED"),
    (
        "undo unknown version",
        "POST",
        "memory/undo",
        {"X-Base-Version": "1"},
        b'{"restoreVersion": 9}',
        404,
        "VERSION_NOT_FOUND",
    ),
    (
        "undo version zero",
        "POST",
        "memory/undo",
        {"X-Base-Version": "1"},
        b'{"restoreVersion": 0}',
        400,
        "INVALID_REQUEST",
    ),
    (
        "unknown mode",
        "PUT",
        "memory/policy",
        {},
        b'{"mode": "sometimes", "expectedRevision": 0}',
        400,
        "INVALID_REQUEST",
    ),
    (
        "negative revision",
        "PUT",
        "memory/policy",
        {},
        b'{"mode": "auto", "expectedRevision": -1}',
        400,
        "INVALID_REQUEST",
    ),
    ("bad cursor", "GET", "memory/versions?cursor=%%%", {}, b"", 400, "INVALID_REQUEST"),
    ("bad limit", "GET", "memory/versions?limit=0", {}, b"", 400, "INVALID_REQUEST"),
    ("unknown version", "GET", "memory/versions/42", {}, b"", 404, "VERSION_NOT_FOUND"),
    ("non-numeric version", "GET", "memory/versions/abc", {}, b"", 400, "INVALID_REQUEST"),
]


@pytest.mark.parametrize(
    ("name", "method", "route", "headers", "body", "status", "code"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_is_refused_and_changes_nothing(
    api: Api,
    seeded: tuple[str, str, dict[str, Any], list[dict[str, Any]]],
    name: str,
    method: str,
    route: str,
    headers: dict[str, str],
    body: bytes,
    status: int,
    code: str,
) -> None:
    owner, ws, _, before = seeded
    response = api.call(
        method,
        f"/v1/workspaces/{ws}/{route}",
        user=owner,
        data=body,
        headers={"Content-Type": "application/json", **headers},
    )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert _state(api, owner, ws) == before


def test_document_over_the_cap_is_413_and_changes_nothing(
    api: Api, seeded: tuple[str, str, dict[str, Any], list[Any]]
) -> None:
    owner, ws, _, before = seeded
    too_big = "é" * (MAX_DOCUMENT_BYTES // 2 + 1)  # two UTF-8 bytes each: over the cap by bytes, not characters
    response = api.save(owner, ws, too_big, 1)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    exactly = "a" * MAX_DOCUMENT_BYTES
    assert _state(api, owner, ws) == before
    assert api.save(owner, ws, exactly, 1).status_code == 200


def test_request_body_over_the_transport_cap_is_413(
    api: Api, seeded: tuple[str, str, dict[str, Any], list[Any]]
) -> None:
    owner, ws, _, before = seeded
    response = api.save(owner, ws, "x" * MAX_BODY_BYTES, 1)
    assert response.status_code == 413
    assert response.json() == {
        "error": {"code": "PAYLOAD_TOO_LARGE", "message": f"request body over {MAX_BODY_BYTES} bytes"},
        "limit": MAX_BODY_BYTES,
    }
    assert _state(api, owner, ws) == before


def test_a_document_at_the_cap_saves_in_the_costliest_json_spelling(
    api: Api, seeded: tuple[str, str, dict[str, Any], list[Any]]
) -> None:
    """64 KiB of control characters is a 384 KiB body (each byte a six-byte escape): the README promises 413
    only over 64 KiB of document, so the transport cap must let it through (it was a 413 at 256 KiB)."""
    owner, ws, _, _ = seeded
    response = api.save(owner, ws, "\x01" * MAX_DOCUMENT_BYTES, 1)
    assert response.status_code == 200, response.text
    assert api.read(owner, ws)["bytes"] == MAX_DOCUMENT_BYTES


def test_validation_errors_never_echo_the_input(api: Api, seeded: tuple[str, str, dict[str, Any], list[Any]]) -> None:
    owner, ws, _, _ = seeded
    marker = "MARKER-echo-7f3a"
    response = api.call(
        "PUT",
        f"/v1/workspaces/{ws}/memory",
        user=owner,
        json={"content": marker, marker: 1},
        headers={"X-Base-Version": "1"},
    )
    assert response.status_code == 400
    assert marker not in response.text
