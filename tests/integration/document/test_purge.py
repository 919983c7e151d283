"""Forgetting a line everywhere (docs/architecture.md#forgetting-a-line, issue 9 item 3), through the HTTP API on the
moto server: every version that held the exact line becomes a stub (410 on read, Undo to it refused, listed with
purgedAt and purgedBy), every other version reads back byte-identical, no byte of the purged ciphertexts is left in the
table, and the line never reaches a log, an error or a response. Bad input changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.support import Api, FunctionLogs, item_bytes, new_user, scan_all

pytestmark = pytest.mark.integration


def by_sort_key(items: list[dict[str, Any]], ws: str) -> dict[str, dict[str, Any]]:
    return {item["sk"]["S"]: item for item in items if item["pk"]["S"] == f"WS#{ws}"}


def purge(api: Api, user: str, ws: str, line: Any) -> Any:
    return api.call("POST", f"/v1/workspaces/{ws}/memory/purge", user=user, json={"line": line})


def test_every_version_that_held_the_line_becomes_a_stub_and_nothing_else_changes(
    api: Api, resources: LocalResources, function_logs: FunctionLogs
) -> None:
    secret = f"- SECRET-{uuid.uuid4().hex}"
    owner = new_user("owner")
    ws = api.workspace(owner)
    texts = [
        f"# Memory\n{secret}\n",  # 1: holds it
        f"# Memory\n{secret}\n- more\n",  # 2: holds it
        f"# Memory\n{secret} but longer\n- x{secret}\n",  # 3: near misses only
        f"# Memory\n- more\n{secret}",  # 4: holds it as the last line, no newline after
        "# Memory\n- more\n",  # 5: the head, without it
    ]
    for base, text in enumerate(texts):
        assert api.save(owner, ws, text, base).status_code == 200
    before = by_sort_key(scan_all(resources), ws)

    with function_logs.captured() as logs:
        response = purge(api, owner, ws, secret)
        assert (response.status_code, response.json()) == (200, {"purgedVersions": [1, 2, 4], "count": 1 + 1 + 1})
        again = purge(api, owner, ws, secret)  # idempotent
        assert (again.status_code, again.json()) == (200, {"purgedVersions": [], "count": 0})
        read = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/2", user=owner)
        undo = api.undo(owner, ws, 4, 5)
        history = api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner)

    after = by_sort_key(scan_all(resources), ws)
    (event,) = set(after) - set(before)  # the purge's one audit event; the repeat purged nothing, wrote nothing
    audit = after.pop(event)
    assert (audit["kind"]["S"], audit["op"]["S"], audit["actor"]["S"]) == ("document", "purge", owner)
    assert [t["M"]["id"]["S"] for t in audit["targets"]["L"]] == ["1", "2", "4"]
    assert set(after) == set(before)
    purged = {f"DOC#V#{n:012d}" for n in (1, 2, 4)}
    for sk, item in after.items():
        if sk in purged:
            old = {name: value for name, value in before[sk].items() if name != "ciphertext"}
            assert {name: value for name, value in item.items() if name not in ("purgedAt", "purgedBy")} == old
            assert item["purgedBy"] == {"S": owner}
            assert "purgedAt" in item
        else:
            assert item == before[sk], sk  # every other item, the head included, is byte-identical
    leftovers = [bytes(before[sk]["ciphertext"]["B"]) for sk in purged]
    everything = [item_bytes(item) for item in scan_all(resources)]
    assert not any(old in blob for old in leftovers for blob in everything)

    assert (read.status_code, read.json()["error"]["code"]) == (410, "VERSION_PURGED")
    assert (undo.status_code, undo.json()["error"]["code"]) == (410, "VERSION_PURGED")
    assert by_sort_key(scan_all(resources), ws) == {**after, event: audit}  # the refused Undo wrote nothing
    listed = {v["version"]: v for v in history.json()["versions"]}
    assert set(listed) == {1, 2, 3, 4, 5}
    for number in (1, 2, 4):
        assert listed[number]["purgedBy"] == owner
        assert listed[number]["purgedAt"] == after[f"DOC#V#{number:012d}"]["purgedAt"]["S"]
    for number in (3, 5):
        assert "purgedAt" not in listed[number]
        content = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/{number}", user=owner).json()["content"]
        assert content == texts[number - 1]
    assert api.read(owner, ws)["content"] == texts[-1]

    exchanged = response.text + again.text + read.text + undo.text + history.text
    assert secret not in exchanged
    assert ws in logs.getvalue()
    assert secret.encode() not in logs.getvalue().encode()


MAX = 500


def _bad_cases() -> list[tuple[str, str, Any, int, str]]:
    """(case, who calls, line, status, code)."""
    return [
        ("empty line", "owner", "", 400, "INVALID_REQUEST"),
        ("over 500 bytes", "owner", "é" * 250 + "x", 400, "INVALID_REQUEST"),  # 501 bytes, 251 characters
        ("a newline", "owner", "- kept\n- also", 400, "INVALID_REQUEST"),
        ("a carriage return", "owner", "- kept\r- also", 400, "INVALID_REQUEST"),
        ("blank", "owner", " \t ", 400, "INVALID_REQUEST"),
        ("a lone surrogate", "owner", "\ud800", 400, "INVALID_REQUEST"),
        ("not a string", "owner", 7, 400, "INVALID_REQUEST"),
        ("the head holds it", "owner", "- kept", 409, "LINE_IN_HEAD"),
        ("a viewer", "viewer", "- old", 403, "FORBIDDEN"),
        ("an editor", "editor", "- old", 403, "FORBIDDEN"),
        # No version holds it, so no transaction would re-check the owner: the early check must answer.
        ("an editor, a line nowhere", "editor", "- never written", 403, "FORBIDDEN"),
        ("a stranger", "stranger", "- old", 404, "WORKSPACE_NOT_FOUND"),
    ]


@pytest.mark.parametrize(("case", "who", "line", "status", "code"), _bad_cases(), ids=[c[0] for c in _bad_cases()])
def test_a_refused_purge_changes_nothing(
    api: Api, resources: LocalResources, case: str, who: str, line: Any, status: int, code: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    users = {"owner": owner, "viewer": new_user("viewer"), "editor": new_user("editor"), "stranger": new_user("x")}
    for role in ("viewer", "editor"):
        api.add_member(owner, ws, users[role], role)
    assert api.save(owner, ws, "# Memory\n- old\n- kept\n", 0).status_code == 200
    assert api.save(owner, ws, "# Memory\n- kept\n", 1).status_code == 200
    before = scan_all(resources)
    if case == "a lone surrogate":  # JSON can spell one; requests would not encode it
        response = api.call(
            "POST",
            f"/v1/workspaces/{ws}/memory/purge",
            user=owner,
            data=b'{"line": "\\ud800"}',
            headers={"Content-Type": "application/json"},
        )
    else:
        response = purge(api, users[who], ws, line)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code), case
    assert scan_all(resources) == before
    if isinstance(line, str) and line:
        assert line not in response.text


def test_a_line_of_exactly_500_bytes_is_accepted(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    line = "é" * (MAX // 2)
    assert len(line.encode()) == MAX
    assert api.save(owner, ws, f"{line}\n", 0).status_code == 200
    assert api.save(owner, ws, "gone\n", 1).status_code == 200
    response = purge(api, owner, ws, line)
    assert (response.status_code, response.json()) == (200, {"purgedVersions": [1], "count": 1})


def test_a_line_is_purged_as_a_person_sees_it(api: Api, resources: LocalResources) -> None:
    """Attack (issue 17, finding 9): a version that holds the line with CRLF endings, trailing blanks or in
    decomposed Unicode kept it, and purge answered `count: 0`. Every one is now a stub; a longer line is not."""
    secret = f"- café SECRET-{uuid.uuid4().hex}"
    decomposed = secret.replace("é", "e\u0301")
    owner = new_user("owner")
    ws = api.workspace(owner)
    texts = [
        f"# Memory\r\n{secret}\r\n- more\r\n",  # 1: CRLF
        f"# Memory\n{secret}  \t\n",  # 2: trailing blanks
        f"# Memory\n{decomposed}\n",  # 3: the same line, decomposed
        f"# Memory\r{secret}\r",  # 4: old Mac line ends
        f"# Memory\n  {secret}\n{secret} and more\n",  # 5: indented or longer: another line to a reader
        "# Memory\n- more\n",  # 6: the head
    ]
    for base, text in enumerate(texts):
        assert api.save(owner, ws, text, base).status_code == 200
    response = purge(api, owner, ws, secret)
    assert (response.status_code, response.json()) == (200, {"purgedVersions": [1, 2, 3, 4], "count": 4})
    for number in (1, 2, 3, 4):
        read = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/{number}", user=owner)
        assert (read.status_code, read.json()["error"]["code"]) == (410, "VERSION_PURGED")
    kept = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/5", user=owner)
    assert kept.json()["content"] == texts[4]
    padded = purge(api, owner, ws, f"{secret}   ")  # the owner's own trailing blanks do not matter either
    assert (padded.status_code, padded.json()) == (200, {"purgedVersions": [], "count": 0})
    before = scan_all(resources)
    blank = purge(api, owner, ws, "   ")
    assert (blank.status_code, blank.json()["error"]["code"]) == (400, "INVALID_REQUEST")
    assert scan_all(resources) == before
