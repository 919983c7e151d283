"""The benchmark's pure helpers: statistics, call-count aggregation and formatting (no server, no sockets)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable

import pytest

from scripts.bench import (
    CallRecorder,
    KmsScenario,
    Measured,
    Operation,
    call_name,
    calls_per_op,
    format_calls,
    format_count,
    format_ratio,
    format_table,
    measure,
    median,
    p90,
    percentile,
    ratio,
    render,
    report_json,
    sample_document,
    summarize,
)

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


def test_sample_document_is_markdown_of_the_exact_size() -> None:
    text = sample_document(2048)
    assert len(text.encode("utf-8")) == 2048
    assert text.startswith("# Team memory\n")
    assert sample_document(2048) == text
    assert len(sample_document(100)) == 100
