"""The memory-tool adapter's pure parts: which `/memories` paths name what (and which are refused, with which
code), how a `str_replace` becomes the document's line edits, and how the recalled block reads back as lines."""

from __future__ import annotations

from typing import Any, cast

import pytest
from pydantic import TypeAdapter, ValidationError

from mcp_server.delegation import ApiError
from mcp_server.memory_paths import Document, EntriesDir, EntryFile, MemoryCommand, Root, Target, parse
from mcp_server.memory_tool import Memory, MemoryTool, document_lines, invalid_arguments, line_edits, numbered
from workspace_memory.api.models.automation import RecallOut
from workspace_memory.api.models.entries import AgentEntryOut
from workspace_memory.api.models.entry_pages import AgentEntriesOut, EntryRowOut
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType, MemoryWrite, RecallStatus
from workspace_memory.turns.framing import frame

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/memories", Root()),
        ("/memories/", Root()),
        ("/memories/workspace.md", Document()),
        ("/memories/entries", EntriesDir()),
        ("/memories/entries/en_0123abcd.md", EntryFile(entry_id="en_0123abcd")),
        ("/memories/entries/team/release-window.md", EntryFile(key="team/release-window")),
    ],
)
def test_a_mapped_path_names_its_target(path: str, target: Target) -> None:
    assert parse(path) == target


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/etc/passwd", "PATH_NOT_ALLOWED"),
        ("memories/workspace.md", "PATH_NOT_ALLOWED"),
        ("/memoriesx", "PATH_NOT_ALLOWED"),
        ("/memories/../etc/passwd", "PATH_NOT_ALLOWED"),
        ("/memories/entries/../../root", "PATH_NOT_ALLOWED"),
        ("/memories/./workspace.md", "PATH_NOT_ALLOWED"),
        ("/memories//workspace.md", "PATH_NOT_ALLOWED"),
        ("/memories/entries\\..\\x.md", "PATH_NOT_ALLOWED"),
        ("/memories/work\x00space.md", "PATH_NOT_ALLOWED"),
        ("/memories/notes.md", "PATH_NOT_MAPPED"),
        ("/memories/entries/team", "PATH_NOT_MAPPED"),
        ("/memories/entries/Team/A.md", "PATH_NOT_MAPPED"),
        ("/memories/entries/a/b/c.md", "PATH_NOT_MAPPED"),
        ("/memories/entries/en_zz.md", "PATH_NOT_MAPPED"),
    ],
)
def test_a_path_it_may_not_name_is_refused_with_a_stable_code(path: str, code: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse(path)
    assert refused.value.code == code


DOC = ["# Team", "- deploys on Fridays", "", "## Ops", "- on call: Dana"]


@pytest.mark.parametrize(
    ("after", "edits"),
    [
        ("# Team\n- deploys on Fridays\n\n## Ops\n- on call: Dana", []),
        (
            "# Team\n- deploys on Thursdays\n\n## Ops\n- on call: Dana",
            [{"op": "replace", "old": "- deploys on Fridays", "new": "- deploys on Thursdays"}],
        ),
        ("# Team\n\n## Ops\n- on call: Dana", [{"op": "remove", "line": "- deploys on Fridays"}]),
        (
            "# Team\n- deploys on Fridays\n\n## Ops\n- on call: Dana\n- on call: Eve",
            [{"op": "add", "line": "- on call: Eve", "heading": "## Ops"}],
        ),
        (
            "# Team\n- deploys on Fridays\n- flags\n\n## Ops\n- on call: Dana",
            [{"op": "add", "line": "- flags", "heading": "# Team"}],
        ),
    ],
)
def test_a_replacement_becomes_the_line_edits_between_before_and_after(after: str, edits: list[dict[str, str]]) -> None:
    assert line_edits(DOC, after) == edits


def test_the_recalled_block_reads_back_as_the_documents_lines() -> None:
    text = "# Team\n- deploys on Fridays\n"
    recall = RecallOut(status=RecallStatus.OK, revision=3, block=frame(text, 3), memory_write=MemoryWrite.COMMIT)
    assert document_lines(recall) == ["# Team", "- deploys on Fridays"]
    empty = RecallOut(status=RecallStatus.EMPTY, revision=None, block="", memory_write=MemoryWrite.COMMIT)
    assert document_lines(empty) == []


def test_numbered_lines_and_a_range_outside_the_file() -> None:
    assert numbered(["a", "b", "c"], [2, -1]) == "     2\tb\n     3\tc"
    with pytest.raises(ApiError) as refused:
        numbered(["a"], [1, 5])
    assert refused.value.code == "LINE_OUT_OF_RANGE"


def test_invalid_arguments_names_fields_and_types_never_the_values() -> None:
    with pytest.raises(ValidationError) as failed:
        TypeAdapter(MemoryCommand).validate_python({"command": "create", "path": "/memories/x", "file_text": 7})
    message = invalid_arguments(failed.value)
    assert message.startswith("INVALID_ARGUMENTS: ")
    assert "create.file_text (string_type)" in message
    assert "7" not in message.replace("INVALID_ARGUMENTS", "")


class _PinnedMemory:
    """One pinned entry under key `team/release`; any write is a failure of the test."""

    def __init__(self) -> None:
        self.entry = AgentEntryOut(
            entry_id="en_0123abcd",
            revision=1,
            scope=EntryScope.WORKSPACE,
            key="team/release",
            type=EntryType.FACT,
            status=EntryStatus.ACTIVE,
            title="Release",
            summary="Fridays",
            body="",
            valid_from="2026-12-01T00:00:00.000Z",
            valid_to=None,
            author="dana",
            author_kind="human",
            citations=[],
            pinned=True,
        )

    def list_entries(self, limit: int, cursor: str | None = None, key: str | None = None) -> AgentEntriesOut:
        rows = [] if key != "team/release" else [EntryRowOut.model_validate(self.entry.model_dump())]
        return AgentEntriesOut(entries=rows[:limit], next_cursor=None)

    def read_entry(self, entry_id: str) -> AgentEntryOut:
        return self.entry

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"{name} was called")


def test_renaming_a_pinned_entry_is_refused_before_anything_is_written() -> None:
    """A rename is a copy, then a forget proposal the pin refuses: the copy must not be made either."""
    tool = MemoryTool(cast("Memory", _PinnedMemory()))
    rename = {
        "command": "rename",
        "old_path": "/memories/entries/team/release.md",
        "new_path": "/memories/entries/team/r.md",
    }
    answer = tool.tool_result(rename)
    assert answer["is_error"] is True
    assert answer["content"].startswith("ENTRY_PINNED: ")
