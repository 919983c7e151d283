"""Selective recall and `search_memory` in real turns: the production worker, the gateway, the moto server and
the Temporal dev server. What a round is handed stays inside its activity (never in the workflow history); a
member's private entry never reaches another member's turn."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest

from tests.integration.turn_support import plain_client, run
from tests.integration.turns.test_turns import _decoded_bytes, _history_bytes, auto_workspace, finish, start_turn
from tests.support import Api, new_user
from workflows.providers.base import NOTES_HEADING, ModelRequest, ModelResponse
from workflows.providers.scripted import ScriptedProvider
from workflows.tools import ToolName
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.framing import CLOSE_MARKER
from workspace_memory.turns.recall import SELECTED_HEADING

pytestmark = pytest.mark.integration


class SeenPrompts(ScriptedProvider):
    """The scripted model, keeping each round's system prompt by the turn's last user line (the test reads
    what the model was handed; the workflow history never holds it)."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[str]] = {}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.prompts.setdefault(request.messages[0].text.splitlines()[-1], []).append(request.system_prompt)
        return super().complete(request)


@pytest.fixture(scope="module")
def model() -> SeenPrompts:
    return SeenPrompts()


def create(
    api: Api, user: str, ws: str, title: str, summary: str, body: str, scope: str = "workspace", **extra: Any
) -> str:
    payload = {"scope": scope, "type": "fact", "title": title, "summary": summary, "body": body, **extra}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=payload)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def test_selected_entries_reach_the_model_not_the_history_and_private_ones_stay_private(
    api: Api, svc: Services, worker: Settings, model: SeenPrompts
) -> None:
    body_marker, summary_marker = f"BODY{uuid.uuid4().hex}", f"SUMMARY{uuid.uuid4().hex}"
    private_marker = f"PRIVATE{uuid.uuid4().hex}"
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    bob = new_user("bob")
    api.add_member(owner, ws, bob, "editor")
    shared = create(
        api, owner, ws, "Release window", f"production releases go out on Tuesdays {summary_marker}", body_marker
    )
    private = create(api, bob, ws, "My release notes", "production releases I ship late", private_marker, "member")

    question = f"When do production releases go out? {uuid.uuid4().hex[:6]}"
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    turn_id = start_turn(api, owner, ws, conv, f"search: production releases\n{question}", None)
    view = finish(worker, svc, turn_id)
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [(ToolName.SEARCH_MEMORY, "found")]
    prompts = model.prompts[question]
    assert len(prompts) == 2  # the search round and the answer round
    for prompt in prompts:  # every round is handed the selection, the shared entry's body included
        section = prompt[prompt.index(SELECTED_HEADING) :]
        assert section.endswith(CLOSE_MARKER)  # the selection is the prompt's tail: only the block's end follows
        assert "### Tools" not in section  # every stable part comes before it
        assert NOTES_HEADING not in section
        assert f"[{shared}]" in section
        assert body_marker in section
        assert private_marker not in prompt
        assert f"[{private}]" not in prompt
    assert view.answer is not None
    assert f"[{shared}]" in view.answer  # search_memory's result, quoted by the scripted model ...
    assert private not in view.answer  # ... without the other member's private entry

    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()["receipts"]
    assert [r.get("selected") for r in receipts] == [[f"{shared}@1"], [f"{shared}@1"]]

    async def histories() -> tuple[bytes, bytes]:
        history = await (await plain_client(worker)).get_workflow_handle(turn_id).fetch_history()
        return _history_bytes(history), await _decoded_bytes(history, svc)

    raw, decoded = run(histories())
    assert body_marker.encode() not in raw
    assert body_marker.encode() not in decoded
    assert summary_marker.encode() not in raw  # the search result is in history only through the codec
    assert summary_marker.encode() in decoded
    assert SELECTED_HEADING.encode() not in decoded

    # Bob's own turn is handed his private entry: the isolation above is the scope, not a miss.
    bobs_question = f"When do production releases go out? {uuid.uuid4().hex[:6]}"
    finish(worker, svc, start_turn(api, bob, ws, f"conv-{uuid.uuid4().hex[:8]}", bobs_question, None))
    assert private_marker in model.prompts[bobs_question][0]


def test_a_superseded_fact_reaches_the_model_only_as_the_dated_note_of_its_successor(
    api: Api, svc: Services, worker: Settings, model: SeenPrompts
) -> None:
    """Seed 001: a replaced statement is never asserted alone. The model is handed the current one with the old
        one as `[previously, until DATE: "…"]` (the same note a read answers), in the index and in selective recall,
    which stays last."""
    old, new = f"releases ship on Fridays {uuid.uuid4().hex[:8]}", f"releases ship on Tuesdays {uuid.uuid4().hex[:8]}"
    owner, ws = auto_workspace(api, "# Memory\n- a team\n")
    entry_id = create(api, owner, ws, "Release day", old, "body one")
    moved = api.call(
        "PUT",
        f"/v1/workspaces/{ws}/entries/{entry_id}",
        user=owner,
        json={"type": "fact", "title": "Release day", "summary": new, "body": "body two"},
        headers={"X-Base-Revision": "1"},
    )
    assert moved.status_code == 200, moved.text
    read = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert read["previously"]["summary"] == old
    assert read["previously"]["until"] == read["validFrom"]

    question = f"Which day do releases ship? {uuid.uuid4().hex[:6]}"
    finish(worker, svc, start_turn(api, owner, ws, f"conv-{uuid.uuid4().hex[:8]}", question, None))
    prompt = model.prompts[question][0]
    note = f'{new} [previously, until {read["validFrom"][:10]}: "{old}"] [{entry_id}]'
    selection = prompt.index(SELECTED_HEADING)
    assert note in prompt[:selection]  # in the index, which is stable
    assert note in prompt[selection:]  # and in the selection, the tail
    assert prompt.count(old) == prompt.count(f'"{old}"] [{entry_id}]') == 2  # only inside notes, never alone
    assert prompt.endswith(CLOSE_MARKER)


def _cites(kind: str, ref: str, text: str) -> dict[str, Any]:
    return {"sources": [{"kind": kind, "ref": ref, "sha256": hashlib.sha256(text.encode()).hexdigest()}]}


def test_a_turn_is_handed_no_entry_whose_source_is_gone_and_a_changed_one_marked(
    api: Api, svc: Services, worker: Settings, model: SeenPrompts
) -> None:
    """What the selection and `search_memory` hand the model is judged by what it cites, as the index is
    (docs/decisions/0081): an entry citing a purged version reaches no round, by neither; one whose cited entry
    changed its body reaches it marked `[source changed]`, in the selection and in the tool's result."""
    retired = "- releases ship from the old pipeline"
    first = f"# Memory\n{retired}\n"
    owner, ws = auto_workspace(api, first)  # version 1
    assert api.save(owner, ws, "# Memory\n- releases ship from the new pipeline\n", 1).status_code == 200
    cited = create(api, owner, ws, "Pipeline owner", "Dana owns the pipeline", "Fridays")
    gone = create(
        api,
        owner,
        ws,
        "Release pipeline",
        "production releases ship from the old pipeline",
        "",
        **_cites("document-version", "1", first),
    )
    changed = create(
        api,
        owner,
        ws,
        "Release sign-off",
        "production releases ship after Dana signs off",
        "",
        **_cites("entry", cited, "Fridays"),
    )
    purged = api.call("POST", f"/v1/workspaces/{ws}/memory/purge", user=owner, json={"line": retired})
    assert purged.status_code == 200, purged.text
    body = {"type": "fact", "title": "Pipeline owner", "summary": "Dana owns the pipeline", "body": "Mondays"}
    api.supersede(owner, ws, cited, body, 1)

    question = f"When do production releases ship? {uuid.uuid4().hex[:6]}"
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    view = finish(worker, svc, start_turn(api, owner, ws, conv, f"search: production releases ship\n{question}", None))
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [(ToolName.SEARCH_MEMORY, "found")]
    prompts = model.prompts[question]
    assert len(prompts) == 2
    for prompt in prompts:
        section = prompt[prompt.index(SELECTED_HEADING) :]
        assert (
            f"- Release sign-off — production releases ship after Dana signs off [source changed] [{changed}]"
            in section
        )
        assert f"[{gone}]" not in prompt
    assert view.answer is not None
    assert f"[source changed] [{changed}]" in view.answer  # search_memory's result, quoted by the scripted model
    assert gone not in view.answer
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()["receipts"]
    assert all(f"{gone}@1" not in r.get("selected", []) for r in receipts)
    assert all(f"{changed}@1" in r["selected"] for r in receipts)
