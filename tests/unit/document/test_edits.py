"""Unit tests for the memory write tool's edit engine (pure: no sockets, no I/O)."""

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from tests.depth import examples
from workspace_memory.document.edits import (
    MAX_EDITS,
    MAX_LINE_BYTES,
    AddEdit,
    Edit,
    EditProblem,
    EditResult,
    EditsRejected,
    RemoveEdit,
    ReplaceEdit,
    apply_edits,
    utf8_len,
)

pytestmark = pytest.mark.unit

EDITS = TypeAdapter(list[Edit])
SAFE_MESSAGE = re.compile(r"edits rejected: -?\d+:[a-z_]+(, -?\d+:[a-z_]+)*")


def rejected(text: str, edits: list[Edit]) -> tuple[EditProblem, ...]:
    with pytest.raises(EditsRejected) as info:
        apply_edits(text, edits)
    assert SAFE_MESSAGE.fullmatch(str(info.value))
    return info.value.problems


# --- wire format ---------------------------------------------------------------------------------


def test_wire_format_parses_each_op() -> None:
    parsed = EDITS.validate_python(
        [
            {"op": "add", "line": "- a", "heading": "## Decisions"},
            {"op": "replace", "old": "- a", "new": "- b"},
            {"op": "remove", "line": "- b"},
        ]
    )
    assert parsed == [
        AddEdit(line="- a", heading="## Decisions"),
        ReplaceEdit(old="- a", new="- b"),
        RemoveEdit(line="- b"),
    ]


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "add", "line": "x", "extra": 1},
        {"op": "rename", "line": "x"},
        {"line": "x"},
        {"op": "replace", "old": "x"},
        {"op": "remove", "line": 5},
    ],
)
def test_wire_format_rejects_malformed(raw: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        EDITS.validate_python([raw])


def test_models_are_frozen() -> None:
    edit = AddEdit(line="x")
    with pytest.raises(ValidationError):
        edit.line = "y"  # type: ignore[misc]


def test_utf8_len_counts_bytes() -> None:
    assert utf8_len("") == 0
    assert utf8_len("abc") == 3
    assert utf8_len("é") == 2
    assert utf8_len("漢") == 3
    assert utf8_len("🙂") == 4


# --- add -----------------------------------------------------------------------------------------


def test_add_to_empty_document() -> None:
    result = apply_edits("", [AddEdit(line="- x")])
    assert result == EditResult(text="- x\n", changed=True, outcomes=("added",))


def test_add_with_heading_to_empty_document() -> None:
    assert apply_edits("", [AddEdit(line="- x", heading="## H")]).text == "## H\n- x\n"


def test_add_appends_at_end() -> None:
    assert apply_edits("# T\n- a\n", [AddEdit(line="- x")]).text == "# T\n- a\n- x\n"


def test_add_keeps_missing_final_newline() -> None:
    assert apply_edits("- a", [AddEdit(line="- x")]).text == "- a\n- x"


def test_add_already_present_is_noop() -> None:
    text = "## H\n- x  \n"
    result = apply_edits(text, [AddEdit(line="- x", heading="## Other")])
    assert result == EditResult(text=text, changed=False, outcomes=("present",))


def test_add_compares_trailing_whitespace_only() -> None:
    assert apply_edits("- x\t \n", [AddEdit(line="- x ")]).outcomes == ("present",)
    # Leading whitespace is significant (nesting in Markdown lists).
    assert apply_edits("- x\n", [AddEdit(line="  - x")]).text == "- x\n  - x\n"


def test_add_strips_trailing_whitespace_of_new_line() -> None:
    assert apply_edits("", [AddEdit(line="- x  ", heading="## H ")]).text == "## H\n- x\n"


def test_add_under_heading_goes_to_end_of_its_section() -> None:
    text = "# T\n\n## A\n- a1\n- a2\n\n## B\n- b1\n"
    result = apply_edits(text, [AddEdit(line="- new", heading="## A")])
    assert result.text == "# T\n\n## A\n- a1\n- a2\n- new\n\n## B\n- b1\n"


def test_add_under_heading_includes_subsections() -> None:
    text = "## A\n- a\n### A.1\n- a1\n\n## B\n"
    result = apply_edits(text, [AddEdit(line="- new", heading="## A")])
    assert result.text == "## A\n- a\n### A.1\n- a1\n- new\n\n## B\n"


def test_add_under_subheading_stops_at_higher_level() -> None:
    text = "## A\n### A.1\n- a1\n# Top\n- t\n"
    result = apply_edits(text, [AddEdit(line="- new", heading="### A.1")])
    assert result.text == "## A\n### A.1\n- a1\n- new\n# Top\n- t\n"


def test_add_under_empty_section_goes_right_after_heading() -> None:
    text = "## A\n\n\n## B\n"
    assert apply_edits(text, [AddEdit(line="- x", heading="## A")]).text == "## A\n- x\n\n\n## B\n"


def test_add_under_last_section_skips_trailing_blank_lines() -> None:
    text = "## A\n- a\n\n\n"
    assert apply_edits(text, [AddEdit(line="- x", heading="## A")]).text == "## A\n- a\n- x\n\n\n"


def test_add_under_last_section_without_final_newline() -> None:
    assert apply_edits("## A\n- a", [AddEdit(line="- x", heading="## A")]).text == "## A\n- a\n- x"


def test_add_under_first_of_duplicate_headings() -> None:
    text = "## A\n- 1\n## A\n- 2\n"
    assert apply_edits(text, [AddEdit(line="- x", heading="## A")]).text == "## A\n- 1\n- x\n## A\n- 2\n"


def test_hash_lines_inside_code_fence_are_not_headings() -> None:
    text = "## A\n```sh\n# comment\n```\n## B\n"
    result = apply_edits(text, [AddEdit(line="- x", heading="## A")])
    assert result.text == "## A\n```sh\n# comment\n```\n- x\n## B\n"
    # A heading-looking line inside a fence is not a section to add to.
    result = apply_edits("```\n# comment\n```\n", [AddEdit(line="- x", heading="# comment")])
    assert result.text == "```\n# comment\n```\n\n# comment\n- x\n"


def test_add_with_missing_heading_appends_section() -> None:
    result = apply_edits("## A\n- a\n", [AddEdit(line="- x", heading="## Decisions")])
    assert result.text == "## A\n- a\n\n## Decisions\n- x\n"


def test_add_with_missing_heading_reuses_trailing_blank_line() -> None:
    result = apply_edits("## A\n- a\n\n", [AddEdit(line="- x", heading="## Decisions")])
    assert result.text == "## A\n- a\n\n## Decisions\n- x\n"


def test_add_with_missing_heading_without_final_newline() -> None:
    result = apply_edits("- a", [AddEdit(line="- x", heading="## D")])
    assert result.text == "- a\n\n## D\n- x"


def test_add_heading_match_ignores_trailing_whitespace() -> None:
    assert apply_edits("## A  \n- a\n", [AddEdit(line="- x", heading="## A")]).text == "## A  \n- a\n- x\n"


# --- line endings ----------------------------------------------------------------------------------


def test_crlf_document_keeps_crlf() -> None:
    text = "## A\r\n- a\r\n\r\n## B\r\n"
    result = apply_edits(
        text,
        [
            AddEdit(line="- x", heading="## A"),
            AddEdit(line="- y"),
            AddEdit(line="- z", heading="## C"),
        ],
    )
    assert result.text == "## A\r\n- a\r\n- x\r\n\r\n## B\r\n- y\r\n\r\n## C\r\n- z\r\n"


def test_crlf_document_without_final_newline() -> None:
    assert apply_edits("- a\r\n- b", [AddEdit(line="- x")]).text == "- a\r\n- b\r\n- x"
    assert apply_edits("- a\r\n- b", [RemoveEdit(line="- b")]).text == "- a"


# --- replace / remove ------------------------------------------------------------------------------


def test_replace_single_line_keeps_its_ending() -> None:
    result = apply_edits("- a\r\n- b\r\n", [ReplaceEdit(old="- a", new="- A")])
    assert result == EditResult(text="- A\r\n- b\r\n", changed=True, outcomes=("replaced",))
    assert apply_edits("- a\n- b", [ReplaceEdit(old="- b ", new="- B")]).text == "- a\n- B"


def test_replace_with_existing_line_is_allowed() -> None:
    assert apply_edits("- a\n- b\n", [ReplaceEdit(old="- a", new="- b")]).text == "- b\n- b\n"


def test_replace_with_same_line_is_unchanged() -> None:
    result = apply_edits("- a\n", [ReplaceEdit(old="- a", new="- a")])
    assert result == EditResult(text="- a\n", changed=False, outcomes=("replaced",))


def test_remove_single_line() -> None:
    result = apply_edits("- a\n- b\n- c\n", [RemoveEdit(line="- b")])
    assert result == EditResult(text="- a\n- c\n", changed=True, outcomes=("removed",))


def test_remove_last_unterminated_line_keeps_no_final_newline() -> None:
    assert apply_edits("- a\n- b", [RemoveEdit(line="- b")]).text == "- a"


def test_remove_only_line() -> None:
    assert apply_edits("- a\n", [RemoveEdit(line="- a")]).text == ""


@pytest.mark.parametrize("make", [lambda s: ReplaceEdit(old=s, new="- z"), lambda s: RemoveEdit(line=s)])
def test_replace_and_remove_not_found(make: Callable[[str], Edit]) -> None:
    assert rejected("- a\n", [make("- b")]) == (EditProblem(0, "not_found"),)
    assert rejected("", [make("- b")]) == (EditProblem(0, "not_found"),)


@pytest.mark.parametrize("make", [lambda s: ReplaceEdit(old=s, new="- z"), lambda s: RemoveEdit(line=s)])
def test_replace_and_remove_ambiguous(make: Callable[[str], Edit]) -> None:
    assert rejected("- a\n- b\n- a \n", [make("- a")]) == (EditProblem(0, "ambiguous"),)


def test_edits_apply_sequentially() -> None:
    result = apply_edits(
        "- a\n",
        [
            AddEdit(line="- b"),
            ReplaceEdit(old="- b", new="- c"),
            AddEdit(line="- c"),
            RemoveEdit(line="- a"),
        ],
    )
    assert result == EditResult(text="- c\n", changed=True, outcomes=("added", "replaced", "present", "removed"))


def test_changed_is_false_when_net_effect_is_nil() -> None:
    result = apply_edits("- a\n", [AddEdit(line="- b"), RemoveEdit(line="- b")])
    assert result == EditResult(text="- a\n", changed=False, outcomes=("added", "removed"))


# --- problems ----------------------------------------------------------------------------------------


def test_no_edits() -> None:
    assert rejected("- a\n", []) == (EditProblem(-1, "no_edits"),)


def test_too_many_edits() -> None:
    edits: list[Edit] = [AddEdit(line=f"- {i}") for i in range(MAX_EDITS + 1)]
    assert rejected("", edits) == (EditProblem(-1, "too_many_edits"),)
    assert apply_edits("", edits[:MAX_EDITS]).outcomes == ("added",) * MAX_EDITS


@pytest.mark.parametrize("blank", ["", " ", "\t  "])
def test_empty_line(blank: str) -> None:
    assert rejected("", [AddEdit(line=blank)]) == (EditProblem(0, "empty_line"),)
    assert rejected("- a\n", [ReplaceEdit(old="- a", new=blank)]) == (EditProblem(0, "empty_line"),)
    assert rejected("\n", [RemoveEdit(line=blank)]) == (EditProblem(0, "empty_line"),)


@pytest.mark.parametrize("bad", ["a\nb", "a\r", "\r\n", "a\rb"])
def test_multiline(bad: str) -> None:
    assert rejected("", [AddEdit(line=bad)]) == (EditProblem(0, "multiline"),)
    assert rejected("", [AddEdit(line="- x", heading="## " + bad)]) == (EditProblem(0, "multiline"),)
    assert rejected("", [ReplaceEdit(old=bad, new="- x")]) == (EditProblem(0, "multiline"),)
    assert rejected("", [RemoveEdit(line=bad)]) == (EditProblem(0, "multiline"),)


def test_line_length_limit_is_in_utf8_bytes() -> None:
    assert apply_edits("", [AddEdit(line="a" * MAX_LINE_BYTES)]).changed
    assert apply_edits("", [AddEdit(line="é" * (MAX_LINE_BYTES // 2))]).changed
    too_long = ["a" * (MAX_LINE_BYTES + 1), "é" * (MAX_LINE_BYTES // 2 + 1), "🙂" * 126]
    for line in too_long:
        assert utf8_len(line) > MAX_LINE_BYTES
        assert rejected("", [AddEdit(line=line)]) == (EditProblem(0, "line_too_long"),)
        assert rejected("", [AddEdit(line="- x", heading="# " + line)]) == (EditProblem(0, "line_too_long"),)
        assert rejected("", [ReplaceEdit(old=line, new="- x")]) == (EditProblem(0, "line_too_long"),)
        assert rejected("- x\n", [ReplaceEdit(old="- x", new=line)]) == (EditProblem(0, "line_too_long"),)
        assert rejected("", [RemoveEdit(line=line)]) == (EditProblem(0, "line_too_long"),)


@pytest.mark.parametrize("heading", ["", "Decisions", "##Decisions", "## ", "#", "  ## A", "- ## A"])
def test_heading_invalid(heading: str) -> None:
    assert rejected("", [AddEdit(line="- x", heading=heading)]) == (EditProblem(0, "heading_invalid"),)


@pytest.mark.parametrize("heading", ["# A", "## Decisions", "###### deep", "#\tTab", "## A  "])
def test_heading_valid(heading: str) -> None:
    assert apply_edits("", [AddEdit(line="- x", heading=heading)]).outcomes == ("added",)


def test_all_problems_are_collected() -> None:
    problems = rejected(
        "- a\n- a\n",
        [
            AddEdit(line="", heading="nope"),
            ReplaceEdit(old="- a", new="- b"),
            RemoveEdit(line="- missing"),
            ReplaceEdit(old="x\ny", new="x\nz"),  # same code for both fields: reported once
            AddEdit(line="- ok"),
        ],
    )
    assert problems == (
        EditProblem(0, "empty_line"),
        EditProblem(0, "heading_invalid"),
        EditProblem(1, "ambiguous"),
        EditProblem(2, "not_found"),
        EditProblem(3, "multiline"),
    )


def test_later_edits_see_text_without_failed_edit() -> None:
    # Edit 0 fails, so edit 1 cannot find the line edit 0 would have added.
    problems = rejected("- a\n", [AddEdit(line="- b", heading="bad"), RemoveEdit(line="- b")])
    assert problems == (EditProblem(0, "heading_invalid"), EditProblem(1, "not_found"))


def test_messages_never_contain_text() -> None:
    secret = "- the launch code is 1234"
    with pytest.raises(EditsRejected) as info:
        apply_edits(secret + "\n" + secret + "\n", [RemoveEdit(line=secret), AddEdit(line=secret + "\n")])
    message = str(info.value)
    assert message == "edits rejected: 0:ambiguous, 1:multiline"
    assert "launch" not in message
    assert "launch" not in repr(info.value.problems)


def test_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no_edits"):
        apply_edits("", [])


# --- properties --------------------------------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
CHARS = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs"), exclude_characters="\r\n")
BODY_LINE = st.text(alphabet=CHARS, max_size=30).map(lambda s: ("- " + s).rstrip())
HEADING = st.builds(lambda level, word: "#" * level + " " + word, st.integers(1, 3), WORD)
DOC_LINES = st.lists(st.one_of(BODY_LINE, HEADING, st.just("")), max_size=12)
EOL = st.sampled_from(["\n", "\r\n"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(DOC_LINES)
    eol = draw(EOL)
    if not lines:
        return ""
    return eol.join(lines) + (eol if draw(st.booleans()) else "")


def attempt(text: str, edits: list[Edit]) -> EditResult | EditsRejected:
    try:
        return apply_edits(text, edits)
    except EditsRejected as rejected_call:
        return rejected_call


def doc_lines(text: str) -> list[str]:
    return [raw.rstrip() for raw in text.split("\n")]


def headings(text: str) -> list[str]:
    return [line for line in doc_lines(text) if re.match(r"#+ ", line)]


def level(heading: str) -> int:
    return len(heading) - len(heading.lstrip("#"))


@st.composite
def edit_lists(draw: st.DrawFn, text: str, min_size: int = 1, max_size: int = MAX_EDITS) -> list[Edit]:
    """Edits that mostly refer to real lines of `text`, so all outcomes and problems occur."""
    existing = [line for line in doc_lines(text) if line] or ["- none"]
    line = st.one_of(st.sampled_from(existing), BODY_LINE)
    heading = st.one_of(st.none(), st.sampled_from(existing), HEADING)
    edit: st.SearchStrategy[Edit] = st.one_of(
        st.builds(AddEdit, line=line, heading=heading),
        st.builds(ReplaceEdit, old=line, new=line),
        st.builds(RemoveEdit, line=line),
    )
    return draw(st.lists(edit, min_size=min_size, max_size=max_size))


@settings(max_examples=examples(200), deadline=None)
@given(text=documents(), line=BODY_LINE, heading=st.one_of(st.none(), HEADING))
def test_add_is_idempotent(text: str, line: str, heading: str | None) -> None:
    first = apply_edits(text, [AddEdit(line=line, heading=heading)])
    second = apply_edits(first.text, [AddEdit(line=line, heading=heading)])
    assert second.text == first.text
    assert second.outcomes == ("present",)
    assert not second.changed


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents())
def test_any_edits_keep_line_endings_and_final_newline(data: st.DataObject, text: str) -> None:
    edits = data.draw(edit_lists(text))
    result = attempt(text, edits)
    if isinstance(result, EditsRejected):
        assert result.problems
        assert SAFE_MESSAGE.fullmatch(str(result))
        return
    assert len(result.outcomes) == len(edits)
    assert result.changed == (result.text != text)
    if "\r\n" in text:
        assert "\n" not in result.text.replace("\r\n", "")
    else:
        assert "\r" not in result.text
    if text and result.text.strip("\r\n"):
        # (A text of line endings alone cannot say 'no final newline': its unterminated last line is empty.)
        if text.endswith("\n") or not result.text.endswith("\n"):
            assert result.text.endswith("\n") == text.endswith("\n")
        else:
            # The same, after the unterminated last line was removed behind a blank line: that blank line is
            # the new unterminated last line, and it reads as a trailing line ending (pinned below).
            last = text.split("\n")[-1].rstrip("\r")
            assert any(isinstance(edit, RemoveEdit) and edit.line == last for edit in edits), (text, edits)
    if not text and result.text:
        assert result.text.endswith("\n")


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents())
def test_rejected_call_changes_nothing(data: st.DataObject, text: str) -> None:
    before = str(text)
    edits = data.draw(edit_lists(text, max_size=MAX_EDITS - 1))
    position = data.draw(st.integers(0, len(edits)))
    edits.insert(position, RemoveEdit(line="- \u2603 never present \u2603"))
    problems = rejected(text, edits)
    assert EditProblem(position, "not_found") in problems
    assert text == before


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents())
def test_never_more_than_max_edits(data: st.DataObject, text: str) -> None:
    edits = data.draw(edit_lists(text, min_size=MAX_EDITS + 1, max_size=3 * MAX_EDITS))
    assert rejected(text, edits) == (EditProblem(-1, "too_many_edits"),)


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents(), line=BODY_LINE)
def test_add_never_loses_or_reorders_headings(data: st.DataObject, text: str, line: str) -> None:
    before = headings(text)
    heading = data.draw(st.one_of(st.none(), HEADING, *([st.sampled_from(before)] if before else [])))
    after = headings(apply_edits(text, [AddEdit(line=line, heading=heading)]).text)
    if heading is None or heading in before:
        assert after == before
    elif line in doc_lines(text):
        assert after == before  # already present: nothing at all happens
    else:
        assert after == [*before, heading]


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents(), line=BODY_LINE)
def test_added_line_lands_in_its_section(data: st.DataObject, text: str, line: str) -> None:
    before = headings(text)
    heading = data.draw(st.one_of(HEADING, *([st.sampled_from(before)] if before else [])))
    result = apply_edits(text, [AddEdit(line=line, heading=heading)])
    if result.outcomes != ("added",):
        return
    lines = doc_lines(result.text)
    above = lines[: lines.index(line)]
    owner = next(h for h in reversed(above) if h in headings(result.text) and level(h) <= level(heading))
    assert owner == heading


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=documents(), line=BODY_LINE)
def test_remove_after_add_restores_text(data: st.DataObject, text: str, line: str) -> None:
    existing = headings(text)
    heading = data.draw(st.one_of(st.none(), *([st.sampled_from(existing)] if existing else [])))
    added = apply_edits(text, [AddEdit(line=line, heading=heading)])
    if line in doc_lines(text):
        assert added.outcomes == ("present",)
        return
    assert added.changed
    assert apply_edits(added.text, [RemoveEdit(line=line)]).text == text
    # The same round trip inside one call is a no-op overall.
    assert not apply_edits(text, [AddEdit(line=line, heading=heading), RemoveEdit(line=line)]).changed


def test_removing_the_unterminated_last_line_after_blank_lines_keeps_every_blank_line() -> None:
    """Found by the property test above: three blank lines then '-' without a final newline; removing '-'
    leaves the three blank lines (the last one unterminated), not two."""
    result = apply_edits("\n\n\n-", [RemoveEdit(line="-")])
    assert result.text == "\n\n"
    assert result.text.split("\n") == ["", "", ""]


def test_removing_the_unterminated_last_line_after_one_blank_line_leaves_it_unterminated() -> None:
    """Found by the property test: '-', a blank line, then '- 0' without a final newline; removing '- 0' leaves
    '-' and the blank line, which is now the unterminated last line."""
    assert apply_edits("-\n\n- 0", [RemoveEdit(line="- 0")]).text.split("\n") == ["-", ""]
