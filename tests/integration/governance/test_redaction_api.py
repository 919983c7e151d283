"""Redaction before storage over HTTP (docs/architecture.md#redaction): an agent's capture and notes are stored
redacted, with counts in the answer; a human's Save is stored as typed and answered with warnings; an agent's text that
is nothing but secrets is refused (`REDACTED_TO_NOTHING`) and nothing is stored. Checked in the table's
decrypted items, and no secret reaches a log, an item in clear or an answer."""

from __future__ import annotations

import random
import string
import uuid
from typing import Any

import pytest
from stdnum import luhn

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import admitted, agent_save, agent_workspace
from tests.integration.turns.test_automation_api import auto_workspace, capture
from tests.support import RUNTIME, Api, FunctionLogs, admission_headers, item_bytes, scan_all
from workspace_memory.bootstrap import Services
from workspace_memory.document.versions import document_context
from workspace_memory.store import keys
from workspace_memory.turns.notes import Notebook, notes_context

pytestmark = pytest.mark.integration


def aws_key() -> str:
    return "AKIA" + "".join(random.choices(string.ascii_uppercase + string.digits, k=16))


def card() -> str:
    body = "4" + "".join(random.choices(string.digits, k=14))
    return body + luhn.calc_check_digit(body)


def stored_version_text(svc: Services, ws: str, version: int) -> str:
    item = svc.table.get(*keys.version(ws, version))
    assert item is not None
    return svc.cipher.decrypt(bytes(item["ciphertext"]), document_context(ws, version)).decode()


def test_a_capture_stores_its_edit_redacted_and_reports_counts(
    api: Api, svc: Services, resources: LocalResources, function_logs: FunctionLogs
) -> None:
    key, number = aws_key(), card()
    human_line = "- ops lead: lead@example.com"  # the human's own text is never touched by an agent's capture
    with function_logs.captured() as logs:
        owner, ws = auto_workspace(api, f"# Memory\n{human_line}\n")
        admission = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws), key="k").json()
        edits = [{"op": "add", "line": f"- deploy key {key}, billing card {number}", "heading": "# Memory"}]
        captured = capture(api, ws, admission, edits, 1)
        replayed = capture(api, ws, admission, edits, 1)
    assert captured.status_code == 200, captured.text
    body = captured.json()
    assert body["outcome"] == "committed"
    assert body["redactions"] == [{"kind": "cloud_key", "count": 1}, {"kind": "card", "count": 1}]
    assert replayed.json()["replayed"] is True
    assert replayed.json()["redactions"] == body["redactions"]

    stored = stored_version_text(svc, ws, body["version"])
    assert stored == f"# Memory\n{human_line}\n- deploy key [redacted:cloud_key], billing card [redacted:card]\n"
    assert api.read(owner, ws)["content"] == stored
    for secret in (key, number):
        assert secret not in captured.text
        assert secret not in logs.getvalue()
        assert [i["sk"]["S"] for i in scan_all(resources) if secret.encode() in item_bytes(i)] == []


def test_a_read_only_capture_proposes_the_redacted_edit(api: Api) -> None:
    owner, ws = auto_workspace(api, "# Memory\n")
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "read_only", "expectedRevision": 1}
    )
    assert policy.status_code == 200, policy.text
    admission = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws), key="k").json()
    answer = capture(api, ws, admission, [{"op": "add", "line": "- mail bob@example.org"}], 1).json()
    assert answer["outcome"] == "proposal"
    assert answer["proposal"]["edits"] == [{"op": "add", "line": "- mail [redacted:email]"}]
    assert answer["redactions"] == [{"kind": "email", "count": 1}]


def test_notes_are_stored_redacted_and_the_answer_counts_what_was_removed(
    api: Api, svc: Services, resources: LocalResources, function_logs: FunctionLogs
) -> None:
    key, number = aws_key(), card()
    owner, ws = auto_workspace(api, "# Memory\n")
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    admission = api.admit(
        f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws), key="k", sessionId=sid
    ).json()
    path = f"/v1/automation/sessions/{sid}/notes"
    headers = admission_headers(admission)
    with function_logs.captured() as logs:
        put = api.call(
            "PUT", path, automation=RUNTIME, json={"notes": f"use {key}\npay with {number}\n"}, headers=headers
        )
    assert put.status_code == 200, put.text
    assert put.json()["redactions"] == [{"kind": "cloud_key", "count": 1}, {"kind": "card", "count": 1}]
    expected = "use [redacted:cloud_key]\npay with [redacted:card]\n"
    assert put.json()["bytes"] == len(expected)

    notebook = Notebook(ws, owner, sid)
    item = svc.table.get(*keys.notes(ws, owner, sid))
    assert item is not None
    assert svc.cipher.decrypt(bytes(item["ciphertext"]), notes_context(notebook, 1)).decode() == expected
    assert api.call("GET", path, automation=RUNTIME, headers=headers).json()["notes"] == expected
    for secret in (key, number):
        assert secret not in put.text
        assert secret not in logs.getvalue()
        assert [i["sk"]["S"] for i in scan_all(resources) if secret.encode() in item_bytes(i)] == []

    plain = api.call("PUT", path, automation=RUNTIME, json={"notes": "check the deploy"}, headers=headers)
    assert "redactions" not in plain.json()


def test_a_human_save_is_stored_as_typed_and_answered_with_warnings(
    api: Api, svc: Services, function_logs: FunctionLogs
) -> None:
    owner, ws = auto_workspace(api, "# Memory\n")
    number = card()
    content = f"# Memory\n- support: help@example.com, +44 20 7946 0958\n- card {number}\n"
    with function_logs.captured() as logs:
        saved = api.save(owner, ws, content, 1)
    assert saved.status_code == 200, saved.text
    assert saved.json()["warnings"] == [
        {"kind": "card", "count": 1},
        {"kind": "email", "count": 1},
        {"kind": "phone", "count": 1},
    ]
    assert number not in saved.text
    assert number not in logs.getvalue()
    assert stored_version_text(svc, ws, 2) == content
    assert api.read(owner, ws)["content"] == content

    clean = api.save(owner, ws, "# Memory\n- deploys on Fridays\n", 2)
    assert clean.status_code == 200
    assert "warnings" not in clean.json()


def test_applying_a_proposal_answers_warnings_for_the_text_it_stores(api: Api) -> None:
    owner, ws = auto_workspace(api, "# Memory\n- billing: billing@example.com\n")
    policy = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()
    applied = api.call(
        "POST",
        f"/v1/workspaces/{ws}/memory/proposals/apply",
        user=owner,
        headers={"X-Base-Version": "1"},
        json={
            "proposal": {
                "edits": [{"op": "add", "line": "- deploys on Fridays"}],
                "baseVersion": 1,
                "clearGeneration": policy["clearGeneration"],
            }
        },
    )
    assert applied.status_code == 200, applied.text
    assert applied.json()["warnings"] == [{"kind": "email", "count": 1}]
    assert api.read(owner, ws)["content"] == "# Memory\n- billing: billing@example.com\n- deploys on Fridays\n"


# -- an agent's text that is nothing but secrets is refused, and nothing is stored (issue 17, finding 11) ------


def partition_items(resources: LocalResources, *partitions: str) -> list[dict[str, Any]]:
    """Every item of the given partitions, in wire form and sorted: what a refused write must leave as it was."""
    found = (i for i in scan_all(resources) if i["pk"]["S"] in partitions)
    return sorted(found, key=lambda i: (str(i["pk"]["S"]), str(i["sk"]["S"])))


def assert_refused_as_nothing(response: Any, *secrets: str) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "REDACTED_TO_NOTHING"
    for secret in secrets:
        assert secret not in response.text


def test_a_capture_of_nothing_but_secrets_is_refused_and_stores_nothing(
    api: Api, svc: Services, resources: LocalResources, function_logs: FunctionLogs
) -> None:
    key = aws_key()
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    admission = api.admit(conv, ws, owner, api.key_session(owner, ws), key="k").json()
    before = partition_items(resources, keys.ws(ws), keys.conv(conv))
    admission_before = svc.table.get(*keys.admission(admission["admissionId"]))
    with function_logs.captured() as logs:
        refused = capture(api, ws, admission, [{"op": "add", "line": f"- {key}", "heading": "# Memory"}], 1)
    assert_refused_as_nothing(refused, key)
    assert key not in logs.getvalue()
    assert partition_items(resources, keys.ws(ws), keys.conv(conv)) == before
    assert svc.table.get(*keys.admission(admission["admissionId"])) == admission_before
    assert [i["sk"]["S"] for i in scan_all(resources) if key.encode() in item_bytes(i)] == []

    kept = capture(api, ws, admission, [{"op": "add", "line": f"- deploy key {key}", "heading": "# Memory"}], 1)
    assert kept.status_code == 200, kept.text  # the admission was not spent: text around a secret is stored
    assert kept.json()["outcome"] == "committed"
    assert api.read(owner, ws)["content"].endswith("- deploy key [redacted:cloud_key]\n")


def test_notes_of_nothing_but_secrets_are_refused_and_store_nothing(api: Api, resources: LocalResources) -> None:
    number = card()
    owner, ws = auto_workspace(api, "# Memory\n")
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    admission = api.admit(
        f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws), key="k", sessionId=sid
    ).json()
    path, headers = f"/v1/automation/sessions/{sid}/notes", admission_headers(admission)
    before = partition_items(resources, keys.ws(ws))
    notes = f"{number}\n- bob@example.org\n+44 20 7946 0958\n"
    refused = api.call("PUT", path, automation=RUNTIME, json={"notes": notes}, headers=headers)
    assert_refused_as_nothing(refused, number, "bob@example.org")
    assert partition_items(resources, keys.ws(ws)) == before
    assert api.call("GET", path, automation=RUNTIME, headers=headers).json()["notes"] == ""


@pytest.mark.parametrize("mode", ["auto", "read_only"])
def test_an_agent_entry_of_nothing_but_secrets_is_refused_and_stores_nothing(
    api: Api, resources: LocalResources, mode: str
) -> None:
    """Committed (`auto`) or proposed (`read_only`), an entry whose body is only a key is neither."""
    key = aws_key()
    owner, ws = agent_workspace(api, mode)
    admission = admitted(api, ws, owner)
    before = partition_items(resources, keys.ws(ws))
    refused = agent_save(api, ws, admission, "save-1", title="Deploy key", body=key)
    assert_refused_as_nothing(refused, key)
    assert partition_items(resources, keys.ws(ws)) == before
    assert [i["sk"]["S"] for i in scan_all(resources) if key.encode() in item_bytes(i)] == []
