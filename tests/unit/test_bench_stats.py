"""The benchmark's pure helpers: statistics, call-count aggregation, formatting, the turn checks and the plain
turn loop (against a fake automation API and the scripted model). No server, no sockets."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from collections.abc import Callable
from typing import Any, cast

import pytest
from temporalio.api.enums.v1 import EventType

from scripts.bench.cold_start import BASELINE, PROBE, child_environment, handler_modules
from scripts.bench.report import (
    format_calls,
    format_count,
    format_ratio,
    format_table,
    render,
    render_cold_imports,
    render_turn_calls,
    render_turns,
    report_json,
)
from scripts.bench.scenes import Rotation, sample_document
from scripts.bench.stats import (
    CallRecorder,
    ImportTime,
    KmsScenario,
    Measured,
    Operation,
    TurnSample,
    call_name,
    calls_per_op,
    calls_per_round,
    measure,
    median,
    p90,
    percentile,
    ratio,
    summarize,
    summarize_cold_imports,
    summarize_turns,
)
from scripts.bench.turns import (
    EXPECTED_TOOLS,
    PLAIN_TURN,
    TEMPORAL_TURN,
    TURN_ROUNDS,
    CapturingRunner,
    plain_turn,
    scheduled_activities,
    turn_message,
    turn_problems,
)
from workflows.activities import TurnActivities
from workflows.automation import Admission, ApiResponse, AutomationApi
from workflows.providers.scripted import ScriptedProvider, parse_directives
from workflows.tools import ToolName
from workspace_memory.api.models.automation import CaptureOut, NotesMetaOut, NotesOut, RecallOut
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.recall import MemoryWrite, RecallStatus
from workspace_memory.turns.turn_contract import RoundReceipt, ToolOutcome, TurnInput, TurnView

pytestmark = pytest.mark.unit


# -- statistics ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [([3.0], 3.0), ([1.0, 3.0], 2.0), ([5.0, 1.0, 3.0], 3.0), ([4.0, 1.0, 3.0, 2.0], 2.5)],
)
def test_median_matches_statistics_median(values: list[float], expected: float) -> None:
    assert median(values) == expected == statistics.median(values)


def test_p90_interpolates_between_closest_ranks() -> None:
    values = [float(v) for v in range(1, 11)]  # 1..10
    assert p90(values) == pytest.approx(9.1)
    assert p90(list(reversed(values))) == pytest.approx(9.1)  # order of the samples does not matter
    assert p90([7.0]) == 7.0


def test_p90_agrees_with_statistics_inclusive_quantiles() -> None:
    values = [0.3, 9.0, 2.5, 4.4, 1.1, 8.2, 3.3, 7.7, 6.6, 5.5, 12.0, 0.9, 4.0]
    assert p90(values) == pytest.approx(statistics.quantiles(values, n=10, method="inclusive")[8])


def test_percentile_ends_are_min_and_max() -> None:
    values = [4.0, 2.0, 9.0]
    assert percentile(values, 0) == 2.0
    assert percentile(values, 100) == 9.0


@pytest.mark.parametrize("q", [-1, 100.5])
def test_percentile_rejects_out_of_range(q: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        percentile([1.0], q)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        median([])


def test_ratio() -> None:
    assert ratio(6.0, 2.0) == 3.0
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(1.0, None) is None
    assert ratio(1.0, 0.0) is None


# -- call counting -------------------------------------------------------------------------------------------


def test_call_name_from_botocore_event() -> None:
    assert call_name("before-call.dynamodb.TransactGetItems") == "dynamodb.TransactGetItems"
    assert call_name("before-call.kms.Decrypt") == "kms.Decrypt"
    with pytest.raises(ValueError, match="before-call"):
        call_name("after-call.kms.Decrypt")
    with pytest.raises(ValueError, match="before-call"):
        call_name("before-call.kms")


def test_calls_per_op_is_the_mean_per_iteration_sorted() -> None:
    iterations = [
        ["kms.GenerateDataKey", "dynamodb.TransactGetItems", "dynamodb.TransactWriteItems"],
        ["dynamodb.TransactGetItems", "dynamodb.TransactWriteItems", "kms.GenerateDataKey"],
    ]
    counts = calls_per_op(iterations)
    assert counts == {"dynamodb.TransactGetItems": 1, "dynamodb.TransactWriteItems": 1, "kms.GenerateDataKey": 1}
    assert list(counts) == sorted(counts)


def test_calls_per_op_fractions_and_expected_zeros() -> None:
    counts = calls_per_op([["dynamodb.TransactGetItems", "kms.Decrypt"], ["dynamodb.TransactGetItems"]])
    assert counts == {"dynamodb.TransactGetItems": 1.0, "kms.Decrypt": 0.5}
    warm = calls_per_op([["dynamodb.TransactGetItems"]] * 3, expected=("kms.Decrypt",))
    assert warm == {"dynamodb.TransactGetItems": 1.0, "kms.Decrypt": 0.0}
    assert calls_per_op([], expected=("kms.Decrypt",)) == {"kms.Decrypt": 0.0}


def test_recorder_names_calls_and_answers_none() -> None:
    recorder = CallRecorder()
    handler: Callable[..., object] = recorder  # botocore's view of it
    # a before-call handler that returned something would replace the AWS response
    assert handler("before-call.dynamodb.GetItem", model=object(), params={}) is None
    mark = len(recorder.calls)
    recorder(event_name="before-call.kms.Decrypt")
    assert recorder.calls == ["dynamodb.GetItem", "kms.Decrypt"]
    assert recorder.since(mark) == ["kms.Decrypt"]


def test_measure_interleaves_and_skips_warmup() -> None:
    recorder = CallRecorder()
    order: list[str] = []

    def op(name: str, calls: list[str]) -> Operation:
        def fn() -> None:
            order.append(name)
            for call in calls:
                recorder(f"before-call.{call}")

        return Operation(name, None if name == "base" else "base", fn)

    measured = measure(
        [op("base", ["dynamodb.GetItem"]), op("read", ["dynamodb.TransactGetItems", "kms.Decrypt"])],
        recorder,
        iterations=3,
        warmup=2,
    )
    assert order == ["base", "read"] * 5
    base, read = measured
    assert len(base.samples_ms) == len(read.samples_ms) == 3
    assert base.calls == [["dynamodb.GetItem"]] * 3
    assert read.calls == [["dynamodb.TransactGetItems", "kms.Decrypt"]] * 3
    assert read.baseline_name == "base"
    assert all(ms >= 0 for ms in base.samples_ms + read.samples_ms)


def test_measure_refuses_duplicate_names() -> None:
    with pytest.raises(ValueError, match="unique"):
        measure([Operation("read", None, lambda: None)] * 2, CallRecorder(), iterations=1, warmup=0)


def test_measure_runs_before_untimed_and_uncounted() -> None:
    recorder = CallRecorder()
    order: list[str] = []

    def before() -> None:
        order.append("admit")
        recorder("before-call.dynamodb.TransactWriteItems")  # the admission's calls...
        recorder("before-call.kms.GenerateDataKey")

    def capture() -> None:
        order.append("capture")
        recorder("before-call.dynamodb.TransactWriteItems")

    (measured,) = measure([Operation("capture", None, capture, before=before)], recorder, iterations=2, warmup=1)
    assert order == ["admit", "capture"] * 3
    assert measured.calls == [["dynamodb.TransactWriteItems"]] * 2  # ...are not the capture's
    assert len(measured.samples_ms) == 2


def test_rotation_is_due_first_and_every_n_runs() -> None:
    rotation = Rotation(3)
    assert [rotation.due() for _ in range(7)] == [True, False, False, True, False, False, True]
    assert rotation.tables == 3
    assert rotation.runs == 7
    assert [Rotation(1).due() for _ in range(2)] == [True, True]
    with pytest.raises(ValueError, match="at least one"):
        Rotation(0)


def test_calls_per_round_divides_by_all_rounds() -> None:
    turns = [["kms.GenerateDataKey"] * 12 + ["kms.Decrypt"] * 2, ["kms.GenerateDataKey"] * 12]
    assert calls_per_round(turns, [3, 3]) == {"kms.Decrypt": pytest.approx(2 / 6), "kms.GenerateDataKey": 4.0}
    assert calls_per_round([[], []], [3, 3], expected=("kms.Decrypt",)) == {"kms.Decrypt": 0.0}
    assert calls_per_round([], []) == {}
    with pytest.raises(ValueError, match="one round count per turn"):
        calls_per_round([["kms.Decrypt"]], [])


# -- summaries and formatting --------------------------------------------------------------------------------


def _measured() -> list[Measured]:
    return [
        Measured("raw GetItem", None, [2.0, 1.0, 3.0], [["dynamodb.GetItem"]] * 3),
        Measured("raw PutItem", None, [4.0, 4.0, 4.0], [["dynamodb.PutItem"]] * 3),
        Measured("read", "raw GetItem", [3.0, 5.0, 4.0], [["dynamodb.TransactGetItems"]] * 3, ("kms.Decrypt",)),
        Measured(
            "save", "raw PutItem", [10.0, 12.0, 11.0], [["dynamodb.TransactWriteItems", "kms.GenerateDataKey"]] * 3
        ),
        Measured("orphan", "no such baseline", [1.0], [[]]),
    ]


def test_summarize_ratios_against_the_named_baseline() -> None:
    by_name = {s.name: s for s in summarize(_measured())}
    assert by_name["raw GetItem"].median_ms == 2.0
    assert by_name["raw GetItem"].median_ratio is None
    assert by_name["read"].median_ms == 4.0
    assert by_name["read"].median_ratio == 2.0
    assert by_name["read"].p90_ms == pytest.approx(4.8)
    assert by_name["read"].calls_per_op == {"dynamodb.TransactGetItems": 1.0, "kms.Decrypt": 0.0}
    assert by_name["save"].median_ratio == pytest.approx(11.0 / 4.0)
    assert by_name["orphan"].median_ratio is None
    assert by_name["orphan"].iterations == 1


@pytest.mark.parametrize(("value", "text"), [(1.0, "1"), (0.0, "0"), (0.5, "0.5"), (1 / 3, "0.33"), (2.0, "2")])
def test_format_count(value: float, text: str) -> None:
    assert format_count(value) == text


def test_format_calls() -> None:
    assert format_calls({"dynamodb.TransactGetItems": 1.0, "kms.Decrypt": 0.0}) == (
        "dynamodb.TransactGetItems=1 kms.Decrypt=0"
    )
    assert format_calls({}) == "(none)"


def test_format_ratio() -> None:
    assert format_ratio(None, None) == "(baseline)"
    assert format_ratio(2.345, "raw GetItem") == "2.35x raw GetItem"
    assert format_ratio(None, "raw GetItem") == "n/a (no raw GetItem)"


def test_format_table_aligns_columns() -> None:
    table = format_table(["op", "ms"], [["read", "1.50"], ["history", "12.00"]], "<>")
    assert table.splitlines() == [
        "op      |    ms",
        "--------+------",
        "read    |  1.50",
        "history | 12.00",
    ]


def test_format_table_rejects_ragged_rows() -> None:
    with pytest.raises(ValueError, match="one cell per header"):
        format_table(["a", "b"], [["only one"]])


def test_render_has_a_row_per_operation() -> None:
    lines = render(summarize(_measured())).splitlines()
    assert lines[0].split(" | ")[0].strip() == "operation"
    assert len(lines) == 2 + len(_measured())
    read = next(line for line in lines if line.startswith("read "))
    assert "dynamodb.TransactGetItems=1 kms.Decrypt=0" in read
    assert "2.00x raw GetItem" in read


def test_report_json_round_trips() -> None:
    kms = [KmsScenario("warm process, unchanged head", 10, {"kms.Decrypt": 0.0})]
    data = report_json(summarize(_measured()), kms, {"iterations": 3})
    decoded = json.loads(json.dumps(data))
    assert decoded["iterations"] == 3
    assert [op["name"] for op in decoded["operations"]] == [m.name for m in _measured()]
    assert decoded["operations"][2]["median_ratio"] == 2.0
    assert decoded["kms_per_read"][0]["kms_calls_per_read"] == {"kms.Decrypt": 0.0}
    assert decoded["turns"] == []


def test_sample_document_is_markdown_of_the_exact_size() -> None:
    text = sample_document(2048)
    assert len(text.encode("utf-8")) == 2048
    assert text.startswith("# Team memory\n")
    assert sample_document(2048) == text
    assert len(sample_document(100)) == 100


# -- agent turns -------------------------------------------------------------------------------------------


def test_turn_message_asks_for_a_capture_a_note_and_an_answer() -> None:
    directives, other = parse_directives(turn_message("7"))
    assert [(d.kind, d.text) for d in directives] == [("remember", "- fact 7"), ("note", "n 7")]
    assert other == ["What do you know?"]
    assert len(directives) + 1 == TURN_ROUNDS  # one round per directive, then the answer


def test_scheduled_activities_counts_only_scheduled_events() -> None:
    kinds = [
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
        EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
        EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
        EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
        EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    ]
    assert scheduled_activities(kinds) == 2
    assert scheduled_activities([]) == 0


def _view(rounds: int = 3, outcomes: tuple[tuple[str, str], ...] = EXPECTED_TOOLS, status: str = "ok") -> TurnView:
    return TurnView(
        conversation_id="conv",
        status="completed",
        answer="done",
        rounds=rounds,
        tool_outcomes=[
            ToolOutcome(round=i + 1, tool=t, ok=o != "refused", outcome=o) for i, (t, o) in enumerate(outcomes)
        ],
        receipts=[RoundReceipt(round=i + 1, status=status, revision=1) for i in range(rounds)],
    )


def test_turn_problems_accepts_the_designed_turn_only() -> None:
    assert turn_problems(_view()) == []
    assert turn_problems(_view(rounds=2)) == ["2 rounds, not 3"]
    refused = turn_problems(_view(outcomes=((ToolName.REMEMBER, "refused"), (ToolName.NOTES_UPDATE, "saved"))))
    assert len(refused) == 1
    assert refused[0].startswith("tool outcomes")
    assert turn_problems(_view(status="superseded")) == ["recall statuses ['superseded', 'superseded', 'superseded']"]
    assert turn_problems(_view().model_copy(update={"status": "failed"})) == ["status failed"]


class FakeApi:
    """The automation API as the activities see it: a head that captures move, notes kept in memory."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.notes = ""
        self.capture_bases: list[int] = []
        self.calls: list[str] = []

    def recall(self, workspace_id: str, admission_id: str, credential: str) -> ApiResponse[RecallOut]:
        self.calls.append("recall")
        block = f"<<<WORKSPACE-MEMORY revision={self.version}\n- a fact\nWORKSPACE-MEMORY>>>"
        return ApiResponse(
            200, RecallOut(status=RecallStatus.OK, revision=self.version, block=block, memory_write=MemoryWrite.NONE)
        )

    def capture(
        self, workspace_id: str, admission_id: str, credential: str, edits: list[Any], base_version: int
    ) -> ApiResponse[CaptureOut]:
        self.calls.append("capture")
        self.capture_bases.append(base_version)
        self.version += 1
        return ApiResponse(200, CaptureOut(outcome=Outcome.COMMITTED, version=self.version))

    def notes_get(self, admission: Admission, session_id: str) -> ApiResponse[NotesOut]:
        self.calls.append("notes_get")
        revision = 1 if self.notes else 0
        return ApiResponse(200, NotesOut(revision=revision, bytes=len(self.notes), updated_at=None, notes=self.notes))

    def notes_put(self, admission: Admission, session_id: str, notes: str) -> ApiResponse[NotesMetaOut]:
        self.calls.append("notes_put")
        self.notes = notes
        return ApiResponse(200, NotesMetaOut(revision=1, bytes=len(notes), updated_at=None))

    def notes_clear(self, admission: Admission, session_id: str) -> ApiResponse[NotesMetaOut]:
        self.calls.append("notes_clear")
        self.notes = ""
        return ApiResponse(200, NotesMetaOut(revision=2, bytes=0, updated_at=None))


def _turn(message: str, session: str | None = "sess-1") -> TurnInput:
    return TurnInput(
        turn_id="turn-1",
        conversation_id="conv-1",
        workspace_id="ws-1",
        user_id="owner",
        admission_id="adm_x.e30",
        credential="secret",
        session_id=session,
        message=message,
    )


def test_plain_turn_runs_the_workflows_rounds_with_the_same_activities() -> None:
    api = FakeApi(version=4)
    activities = TurnActivities(cast(AutomationApi, api), ScriptedProvider())
    view, ran = asyncio.run(plain_turn(activities, _turn(turn_message("1"))))
    assert turn_problems(view) == []
    assert ran == 5  # three model rounds, two tools
    assert api.capture_bases == [4]  # the base is the revision recalled in the capture's round
    assert api.calls == ["recall", "notes_get", "capture", "recall", "notes_get", "notes_put", "recall", "notes_get"]
    assert [r.revision for r in view.receipts] == [4, 5, 5]
    assert view.answer is not None
    assert "n 1" in view.answer  # the last round saw the note written in round 2


def test_plain_turn_stops_at_the_round_limit() -> None:
    api = FakeApi(version=1)
    activities = TurnActivities(cast(AutomationApi, api), ScriptedProvider())
    turn = _turn("note: a\nnote: b\nnote: c").model_copy(update={"max_rounds": 2})
    view, ran = asyncio.run(plain_turn(activities, turn))
    assert view.rounds == 2
    assert ran == 4
    assert view.answer is not None
    assert "round limit" in view.answer


def test_capturing_runner_keeps_what_ingress_starts() -> None:
    runner = CapturingRunner()
    runner.start(_turn("hello"))
    assert [t.turn_id for t in runner.started] == ["turn-1"]
    assert runner.view("turn-1") is None


def _samples(ms: list[float], codec: list[str]) -> list[TurnSample]:
    api = ["dynamodb.TransactGetItems", "dynamodb.PutItem"] * 3
    return [TurnSample(value, 3, 5, api, codec) for value in ms]


def test_summarize_turns_per_round_and_ratio_to_the_plain_loop() -> None:
    temporal = _samples([300.0, 360.0, 330.0], ["kms.GenerateDataKey"] * 12)
    plain = _samples([150.0, 180.0, 165.0], [])
    by_name = {s.name: s for s in summarize_turns([(TEMPORAL_TURN, temporal), (PLAIN_TURN, plain)], PLAIN_TURN)}
    t, p = by_name[TEMPORAL_TURN], by_name[PLAIN_TURN]
    assert t.turns == p.turns == 3
    assert t.rounds_per_turn == 3
    assert t.activities_per_round == pytest.approx(5 / 3)
    assert t.median_ms_per_round == 110.0
    assert t.median_ms_per_turn == 330.0
    assert p.median_ms_per_round == 55.0
    assert t.median_ratio == 2.0
    assert t.baseline_name == PLAIN_TURN
    assert p.median_ratio is None
    assert p.baseline_name is None
    assert t.codec_calls_per_round == {"kms.GenerateDataKey": 4.0}
    assert p.codec_calls_per_round == {}
    assert t.api_calls_per_round == p.api_calls_per_round == {"dynamodb.PutItem": 1.0, "dynamodb.TransactGetItems": 1.0}


def test_render_turns_and_their_calls() -> None:
    summaries = summarize_turns(
        [(TEMPORAL_TURN, _samples([300.0], ["kms.GenerateDataKey"] * 12)), (PLAIN_TURN, _samples([150.0], []))],
        PLAIN_TURN,
    )
    table = render_turns(summaries).splitlines()
    assert len(table) == 4
    temporal = next(line for line in table if line.startswith(TEMPORAL_TURN))
    assert "1.67" in temporal
    assert "100.00" in temporal
    assert "2.00x plain in-process loop" in temporal
    assert "(baseline)" in next(line for line in table if line.startswith(PLAIN_TURN))
    calls = render_turn_calls(summaries)
    assert "kms.GenerateDataKey=4" in calls
    assert "(none)" in calls


def test_report_json_carries_the_turns() -> None:
    turns = summarize_turns([(TEMPORAL_TURN, _samples([300.0], [])), (PLAIN_TURN, _samples([150.0], []))], PLAIN_TURN)
    decoded = json.loads(json.dumps(report_json(summarize(_measured()), [], {"timed_turns": 1}, turns)))
    assert decoded["turns"][0]["name"] == TEMPORAL_TURN
    assert decoded["turns"][0]["median_ratio"] == 2.0
    assert decoded["turns"][1]["activities_per_round"] == pytest.approx(5 / 3)


def test_report_json_keeps_meta_from_shadowing_its_sections() -> None:
    with pytest.raises(ValueError, match="turns"):
        report_json([], [], {"turns": 5})


# -- cold imports ------------------------------------------------------------------------------------------


def test_handler_modules_are_every_routed_function_of_the_template() -> None:
    modules = handler_modules()
    assert modules == sorted(set(modules))
    assert modules == [
        "functions.automation.app",
        "functions.conversations.app",
        "functions.deletion.app",
        "functions.docs.app",
        "functions.entries.app",
        "functions.exports.app",
        "functions.frame.app",
        "functions.memory.app",
        "functions.workspaces.app",
    ]


def test_cold_imports_write_bytecode() -> None:
    env = child_environment({"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}  # the warm-up leaves .pyc files for the timed runs


def test_the_probe_times_the_import_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[str] = []
    monkeypatch.setattr(sys, "argv", ["-c", "json"])  # as the child sees `python -c PROBE json`
    exec(PROBE, {"print": lambda *values: printed.append(" ".join(map(str, values)))})
    assert len(printed) == 1
    wall, cpu = (float(value) for value in printed[0].split())
    assert 0 <= wall < 10_000
    assert 0 <= cpu < 10_000


def _times(*wall: float) -> list[ImportTime]:
    return [ImportTime(ms, ms * 0.9) for ms in wall]


def test_summarize_cold_imports_ratios_against_the_baseline() -> None:
    samples = [(BASELINE, _times(100.0, 120.0, 110.0)), ("functions.memory.app", _times(150.0, 165.0, 160.0))]
    rows = summarize_cold_imports(samples, BASELINE)
    assert [r.module for r in rows] == [BASELINE, "functions.memory.app"]
    assert rows[0].median_ms == 110.0
    assert rows[0].ratio is None
    assert rows[0].cpu_ratio is None
    assert rows[1].median_ms == 160.0
    assert rows[1].ratio == pytest.approx(160 / 110)
    assert rows[1].cpu_median_ms == pytest.approx(144.0)
    assert rows[1].cpu_ratio == pytest.approx(160 / 110)
    assert rows[1].runs == 3
    assert rows[1].p90_ms == pytest.approx(164.0)
    with pytest.raises(ValueError, match="baseline"):
        summarize_cold_imports(samples[1:], BASELINE)


def test_cold_import_ratios_are_of_medians_wall_and_cpu_apart() -> None:
    base = [ImportTime(100.0, 50.0), ImportTime(200.0, 60.0), ImportTime(300.0, 70.0)]
    handler = [ImportTime(150.0, 90.0), ImportTime(160.0, 120.0), ImportTime(400.0, 30.0)]
    _, row = summarize_cold_imports([(BASELINE, base), ("functions.memory.app", handler)], BASELINE)
    assert row.ratio == pytest.approx(160 / 200)
    assert row.cpu_ratio == pytest.approx(90 / 60)


def test_render_cold_imports_and_their_json() -> None:
    rows = summarize_cold_imports(
        [(BASELINE, [ImportTime(100.0, 80.0)]), ("functions.memory.app", [ImportTime(145.0, 120.0)])], BASELINE
    )
    table = render_cold_imports(rows, BASELINE).splitlines()
    assert len(table) == 4
    assert table[2].startswith(f"import {BASELINE} ")
    assert table[2].count("(baseline)") == 2
    handler = table[3]
    assert handler.startswith("import functions.memory.app")
    assert "1.45x boto3" in handler
    assert "1.50x boto3" in handler  # CPU: 120 / 80
    decoded = json.loads(json.dumps(report_json([], [], {}, cold_imports=rows)))
    assert decoded["cold_imports"][1] == {
        "module": "functions.memory.app",
        "runs": 1,
        "median_ms": 145.0,
        "p90_ms": 145.0,
        "ratio": pytest.approx(1.45),
        "cpu_median_ms": 120.0,
        "cpu_ratio": pytest.approx(1.5),
    }
    with pytest.raises(ValueError, match="cold_imports"):
        report_json([], [], {"cold_imports": 1})
