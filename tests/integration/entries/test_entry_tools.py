"""The agent's entry tools in real turns: `save_memory`, `read_memory`, `forget_memory` and `verify_memory` called
by the scripted model, run by the production worker against the gateway, the moto server and the Temporal dev
server."""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

import pytest

from tests.integration.turn_support import plain_client, run
from tests.integration.turns.test_turns import _history_bytes, finish, start_turn
from tests.support import Api, new_user
from workflows.providers.base import ModelRequest, ModelResponse
from workflows.providers.scripted import ScriptedProvider
from workflows.tools import ToolName
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.turn_contract import TurnView

pytestmark = pytest.mark.integration

SAVED = re.compile(r"Saved as entry (\S+) \(revision (\d+)\)")


class OfferedTools(ScriptedProvider):
    """The scripted model, remembering which tools each round offered it (by the turn's first user line)."""

    def __init__(self) -> None:
        self.offered: dict[str, list[list[str]]] = {}

    def complete(self, request: ModelRequest) -> ModelResponse:
        first = request.messages[0].text.splitlines()[0]
        self.offered.setdefault(first, []).append([t.name for t in request.tools])
        return super().complete(request)


@pytest.fixture(scope="module")
def model() -> OfferedTools:
    return OfferedTools()


DOCUMENT = "# Memory\n- deploys on Fridays\n"


def workspace(api: Api, mode: str, document: str = DOCUMENT) -> tuple[str, str]:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": mode, "expectedRevision": 0}
    )
    assert policy.status_code == 200, policy.text
    assert api.save(owner, ws, document, 0).status_code == 200
    return owner, ws


def version_one(document: str) -> str:
    """`verify:`'s evidence: the document's version 1, with the SHA-256 of `document` (what the model read)."""
    return f"document-version 1 {hashlib.sha256(document.encode()).hexdigest()}"


def turn(api: Api, svc: Services, settings: Settings, owner: str, ws: str, message: str) -> TurnView:
    turn_id = start_turn(api, owner, ws, f"conv-{uuid.uuid4().hex[:8]}", message, None)
    return finish(settings, svc, turn_id)


def entries(api: Api, owner: str, ws: str) -> list[dict[str, Any]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["entries"]
    return found


def test_save_memory_commits_in_auto_and_read_memory_opens_it(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    owner, ws = workspace(api, "auto")
    first = f"save: Deploy day {uuid.uuid4().hex[:6]} | we deploy on Fridays | after the canary"
    view = turn(api, svc, worker, owner, ws, f"{first}\nread: saved\nWhat do you know?")

    assert [(o.tool, o.outcome, o.ok) for o in view.tool_outcomes] == [
        (ToolName.SAVE_MEMORY, "committed", True),
        (ToolName.READ_MEMORY, "read", True),
    ]
    assert view.answer is not None
    saved = SAVED.search(view.answer)
    assert saved is not None
    entry_id = saved.group(1)
    stored = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (stored["type"], stored["summary"], stored["body"], stored["authorKind"]) == (
        "fact",
        "we deploy on Fridays",
        "after the canary",
        "agent",
    )
    # read_memory handed the entry to the model, labelled as background context, in the next round.
    assert f"read_memory → Entry {entry_id} (revision 1, fact, active): background context" in view.answer
    assert "after the canary" in view.answer
    # Every round offered both tools: the turn could commit, and the recall provided the memory.
    assert all({ToolName.SAVE_MEMORY, ToolName.READ_MEMORY} <= set(names) for names in model.offered[first])


def test_save_memory_is_a_candidate_in_read_only(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    owner, ws = workspace(api, "read_only")
    first = f"save: Proposed {uuid.uuid4().hex[:6]} | only a proposal"
    view = turn(api, svc, worker, owner, ws, f"{first}\nWhat now?")

    assert [(o.tool, o.outcome, o.ok) for o in view.tool_outcomes] == [(ToolName.SAVE_MEMORY, "proposal", False)]
    assert entries(api, owner, ws) == []
    candidates = api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"]
    assert [(c["type"], c["summary"]) for c in candidates] == [("fact", "only a proposal")]
    assert view.answer is not None
    assert f"candidate {candidates[0]['candidateId']}" in view.answer
    assert all(ToolName.SAVE_MEMORY in names for names in model.offered[first])


def test_entry_tools_are_not_offered_in_off_and_nothing_is_written(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    owner, ws = workspace(api, "off")
    first = f"save: Unwanted {uuid.uuid4().hex[:6]} | must not be stored"
    view = turn(api, svc, worker, owner, ws, f"{first}\nHello")

    offered = model.offered[first]
    assert offered
    assert all(ToolName.SAVE_MEMORY not in names and ToolName.READ_MEMORY not in names for names in offered)
    # The scripted model calls it anyway: the API answers noop and writes nothing.
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [(ToolName.SAVE_MEMORY, "noop")]
    assert entries(api, owner, ws) == []
    assert api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"] == []


def test_a_rule_without_a_quote_is_refused_with_its_code_and_with_one_it_is_saved(
    api: Api, svc: Services, worker: Settings
) -> None:
    owner, ws = workspace(api, "auto")
    view = turn(api, svc, worker, owner, ws, "rule: Tone | be brief\nWhat now?")

    assert [(o.tool, o.outcome, o.ok) for o in view.tool_outcomes] == [(ToolName.SAVE_MEMORY, "invalid", False)]
    assert view.answer is not None
    assert "save_memory → error: Not saved (QUOTE_REQUIRED)." in view.answer
    assert entries(api, owner, ws) == []

    directive = "rule: Answer briefly | always answer briefly | Always answer briefly"
    quoted = turn(api, svc, worker, owner, ws, f"{directive}\nWhat now?")
    assert [(o.tool, o.outcome) for o in quoted.tool_outcomes] == [(ToolName.SAVE_MEMORY, "committed")]
    assert [(e["type"], e["title"]) for e in entries(api, owner, ws)] == [("rule", "Answer briefly")]


def test_forget_memory_only_proposes_and_a_member_decides(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    owner, ws = workspace(api, "auto")
    first = f"save: Old habit {uuid.uuid4().hex[:6]} | we used to deploy on Mondays"
    view = turn(api, svc, worker, owner, ws, f"{first}\ndrop: saved\nWhat now?")

    assert [(o.tool, o.outcome, o.ok) for o in view.tool_outcomes] == [
        (ToolName.SAVE_MEMORY, "committed", True),
        (ToolName.FORGET_MEMORY, "proposed", True),
    ]
    (stored,) = entries(api, owner, ws)  # even in auto, the entry stays until a member decides
    (candidate,) = api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"]
    assert (candidate["kind"], candidate["entryId"], candidate["baseRevision"]) == ("forget", stored["entryId"], 1)
    assert view.answer is not None
    assert f"candidate {candidate['candidateId']}" in view.answer
    assert all(ToolName.FORGET_MEMORY in names for names in model.offered[first])

    path = f"/v1/workspaces/{ws}/candidates/{candidate['candidateId']}/accept"
    assert api.call("POST", path, user=owner, json={"revision": 1}).status_code == 200
    assert entries(api, owner, ws) == []


def test_save_memory_in_member_scope_stays_private_to_the_user(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    """`save_memory` takes `scope` (docs/decisions/0054): a personal fact saved in member scope is the user's own,
    and another member sees neither it in the listing nor it by id; a save without scope is a workspace entry."""
    owner, ws = workspace(api, "auto")
    colleague = new_user("colleague")
    api.add_member(owner, ws, colleague, "editor")
    token = uuid.uuid4().hex[:6]
    message = f"private: Dentist {token} | the user sees the dentist on Tuesdays\nsave: Deploys {token} | on Fridays"
    view = turn(api, svc, worker, owner, ws, message)
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [
        (ToolName.SAVE_MEMORY, "committed"),
        (ToolName.SAVE_MEMORY, "committed"),
    ]
    scopes = {e["title"]: e["scope"] for e in entries(api, owner, ws)}
    assert scopes == {f"Dentist {token}": "member", f"Deploys {token}": "workspace"}
    assert [e["title"] for e in entries(api, colleague, ws)] == [f"Deploys {token}"]
    (private,) = [e["entryId"] for e in entries(api, owner, ws) if e["scope"] == "member"]
    hidden = api.call("GET", f"/v1/workspaces/{ws}/entries/{private}", user=colleague)
    assert (hidden.status_code, hidden.json()["error"]["code"]) == (404, "ENTRY_NOT_FOUND")


def test_verify_memory_marks_an_entry_on_evidence_the_service_rechecks(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    """`verify_memory` in a turn: evidence that no longer reads as the model hashed it is refused with each
    source's state and marks nothing; evidence that holds verifies the entry, by the turn's user on one source.
    The results reach the model in ids and states: the workflow history holds no memory text in clear."""
    marker = f"MARK{uuid.uuid4().hex[:10]}"
    document = f"# Memory\n- deploys on Fridays {marker}\n"
    owner, ws = workspace(api, "auto", document)
    first = f"save: Deploy day {marker} | we deploy on Fridays {marker}"
    wrong = version_one("# Memory\n- deploys on Mondays\n")
    message = f"{first}\nverify: saved | 1 | {wrong}\nverify: saved | 1 | {version_one(document)}\nWhat now?"
    turn_id = start_turn(api, owner, ws, f"conv-{uuid.uuid4().hex[:8]}", message, None)
    view = finish(worker, svc, turn_id)

    assert [(o.tool, o.outcome, o.ok) for o in view.tool_outcomes] == [
        (ToolName.SAVE_MEMORY, "committed", True),
        (ToolName.VERIFY_MEMORY, "evidence_not_current", False),
        (ToolName.VERIFY_MEMORY, "committed", True),
    ]
    (entry,) = entries(api, owner, ws)
    stored = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry['entryId']}", user=owner).json()
    assert (stored["revision"], stored["verifiedBy"], stored["verifiedEvidence"]) == (1, owner, 1)
    assert view.answer is not None
    said = [line for line in view.answer.splitlines() if line.startswith(f"- {ToolName.VERIFY_MEMORY} →")]
    assert said == [
        "- verify_memory → error: Not verified: the evidence does not read now as cited (source 1 changed); "
        "nothing was marked.",
        f"- verify_memory → Verified entry {entry['entryId']} (revision 1) on the evidence cited; the memory "
        "service re-checked every source.",
    ]
    assert all(ToolName.VERIFY_MEMORY in names for names in model.offered[first])

    async def history() -> bytes:
        return _history_bytes(await (await plain_client(worker)).get_workflow_handle(turn_id).fetch_history())

    assert marker.encode() not in run(history())  # the entry's text, the document's: ciphertext only


def test_verify_memory_is_not_offered_in_read_only_and_refused_there(
    api: Api, svc: Services, worker: Settings, model: OfferedTools
) -> None:
    """A verification is a claim about now, not a proposal for a person: `read_only` does not offer it, and a
    model that calls it anyway is refused by the fence (`policy`), nothing marked."""
    owner, ws = workspace(api, "read_only")
    body = {"type": "fact", "title": "Deploys", "summary": "deploys on Fridays", "scope": "workspace"}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    first = f"verify: {entry_id} | 1 | {version_one(DOCUMENT)}"
    view = turn(api, svc, worker, owner, ws, f"{first}\nWhat now?")

    assert [(o.tool, o.outcome, o.predicate) for o in view.tool_outcomes] == [
        (ToolName.VERIFY_MEMORY, "refused", "policy")
    ]
    assert all(ToolName.VERIFY_MEMORY not in names for names in model.offered[first])
    stored = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert "verifiedAt" not in stored
