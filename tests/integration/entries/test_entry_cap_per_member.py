"""The entry version cap is not an oracle (issue 17 finding 10b, docs/decisions/0056): over HTTP, where a
member's private writes are refused does not depend on how many private versions another member holds.

The functions run in processes of their own, so the cap is lowered through their environment: a gateway of
this module's own with ENTRY_VERSION_CAP=3, on the stack's table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scripts.localstack.gateway import Gateway, serving
from scripts.localstack.resources import LocalResources
from scripts.localstack.stack import LocalStack
from tests.support import Api, FunctionLogs, new_user, scan_all
from workspace_memory.store import keys

pytestmark = pytest.mark.integration

CAP = 3


@pytest.fixture(scope="module")
def capped(local_stack: LocalStack, stack_env: dict[str, str], function_logs: FunctionLogs) -> Iterator[Api]:
    environment = {**local_stack.environment(), "ENTRY_VERSION_CAP": str(CAP)}
    with Gateway(environment, log=function_logs.path) as gateway, serving(gateway) as url:
        yield Api(url, timeout=180.0)


def write(api: Api, user: str, ws: str, title: str, scope: str = "member") -> Any:
    body = {"scope": scope, "type": "fact", "title": title, "summary": title, "body": title}
    return api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)


def partition(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    return sorted((i for i in scan_all(resources) if i["pk"]["S"] == keys.ws(ws)), key=lambda i: str(i["sk"]["S"]))


def private_writes_until_refused(api: Api, resources: LocalResources, user: str, ws: str) -> int:
    """How many private entries `user` writes before the first 409 `ENTRY_CAP` (which changes nothing)."""
    for n in range(CAP + 2):
        before = partition(resources, ws)
        written = write(api, user, ws, f"note {n}")
        if written.status_code == 409:
            assert written.json()["error"]["code"] == "ENTRY_CAP", written.text
            assert partition(resources, ws) == before
            return n
        assert written.status_code == 201, written.text
    raise AssertionError("never refused")


def test_a_members_refusal_point_does_not_depend_on_anothers_private_versions(
    capped: Api, resources: LocalResources
) -> None:
    counts = []
    for others in (0, CAP - 1):
        owner, alice, bob = new_user("owner"), new_user("alice"), new_user("bob")
        ws = capped.workspace(owner)
        capped.add_member(owner, ws, alice, "editor")
        capped.add_member(owner, ws, bob, "editor")
        for n in range(others):  # bob's private versions, which alice cannot see
            assert write(capped, bob, ws, f"bob's {n}").status_code == 201
        counts.append(private_writes_until_refused(capped, resources, alice, ws))
    assert counts == [CAP, CAP]


def test_the_shared_entries_have_a_cap_of_their_own(capped: Api, resources: LocalResources) -> None:
    owner, alice = new_user("owner"), new_user("alice")
    ws = capped.workspace(owner)
    capped.add_member(owner, ws, alice, "editor")
    for n in range(CAP):
        assert write(capped, alice, ws, f"shared {n}", scope="workspace").status_code == 201
    before = partition(resources, ws)
    refused = write(capped, owner, ws, "one too many", scope="workspace")
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "ENTRY_CAP")
    assert partition(resources, ws) == before
    assert private_writes_until_refused(capped, resources, alice, ws) == CAP
