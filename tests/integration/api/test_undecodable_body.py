"""A request body that is not UTF-8 (found by schemathesis: it was a 500) is refused with 400 INVALID_REQUEST
on every route that takes a body, and changes nothing."""

from __future__ import annotations

import pytest

from scripts.localstack.resources import LocalResources
from tests.support import Api, new_user, scan_all

pytestmark = pytest.mark.integration

NOT_UTF8 = b"\xff\xfe{\x80"


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("PUT", "/v1/workspaces/{ws}/memory", {"X-Base-Version": "1"}),
        ("PUT", "/v1/workspaces/{ws}/memory/policy", {}),
        ("PUT", "/v1/workspaces/{ws}/ai", {}),
        ("PUT", "/v1/workspaces/{ws}/retention", {}),
        ("POST", "/v1/conversations/conv-x/turns", {}),
    ],
)
def test_a_body_that_is_not_utf8_is_refused(
    api: Api, resources: LocalResources, method: str, path: str, headers: dict[str, str]
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n- stable\n", 0).status_code == 200
    before = scan_all(resources)
    response = api.call(
        method, path.format(ws=ws), user=owner, data=NOT_UTF8, headers={"Content-Type": "application/json", **headers}
    )
    assert response.status_code == 400, response.text
    assert response.json() == {"error": {"code": "INVALID_REQUEST", "message": "request body must be UTF-8 JSON"}}
    assert scan_all(resources) == before


def test_an_automation_body_that_is_not_utf8_is_refused(api: Api, resources: LocalResources) -> None:
    before = scan_all(resources)
    response = api.call("POST", "/v1/automation/conversations/conv-x/admissions", automation="runtime", data=NOT_UTF8)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "INVALID_REQUEST"
    assert scan_all(resources) == before
