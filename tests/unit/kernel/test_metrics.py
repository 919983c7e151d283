"""The metrics port and its EMF sink: closed-vocabulary dimensions, and the counts the domain emits where it
decides (docs/operations.md#metrics)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import pytest

from tests.unit.turns.test_services import EDITOR, OWNER, PREDICATE_OF_EVENT, World, retire_by
from workspace_memory.adapters.emf_metrics import EmfMetrics
from workspace_memory.api.http import refusal
from workspace_memory.document.edits import AddEdit
from workspace_memory.governance.redaction import redact
from workspace_memory.kernel import errors, metrics
from workspace_memory.kernel.metrics import Metric, Unit
from workspace_memory.turns.recall import RecallStatus
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = pytest.mark.unit


@dataclass
class Recorder:
    emitted: list[tuple[str, str, float, dict[str, str]]] = field(default_factory=list)

    def emit(self, metric: Metric, unit: Unit, value: float, dimensions: Mapping[str, str]) -> None:
        self.emitted.append((metric.value, unit.value, value, dict(dimensions)))

    def counts(self, metric: Metric) -> list[tuple[float, dict[str, str]]]:
        return [(value, dims) for name, _, value, dims in self.emitted if name == metric.value]


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    sink = Recorder()
    metrics.install(sink)
    try:
        yield sink
    finally:
        metrics.install(None)


def test_nothing_is_emitted_before_a_sink_is_installed() -> None:
    metrics.count(Metric.CONFLICT, code=metrics.Code("STALE_BASE_VERSION"))  # no sink: no error, no output


@pytest.mark.parametrize("text", ["deploys on Fridays", "MARKER-0f3a", "ws_0123456789abcdef01234567", "a b", ""])
def test_a_dimension_is_never_free_text_or_an_id(recorder: Recorder, text: str) -> None:
    with pytest.raises(ValueError, match="enumeration value or an error code"):
        metrics.count(Metric.CONFLICT, code=metrics.Code(text))
    assert recorder.emitted == []


def test_the_emf_document_names_the_metric_its_dimensions_and_the_service() -> None:
    line = EmfMetrics("WorkspaceMemory", "workspace-memory").document(
        Metric.FENCE_REFUSAL, Unit.COUNT, 1, {"operation": "capture", "predicate": "head"}
    )
    emf = json.loads(line)
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "WorkspaceMemory"
    assert directive["Metrics"] == [{"Name": "FenceRefusal", "Unit": "Count"}]
    assert sorted(directive["Dimensions"][0]) == ["operation", "predicate", "service"]
    assert (emf["operation"], emf["predicate"], emf["service"], emf["FenceRefusal"]) == (
        "capture",
        "head",
        "workspace-memory",
        [1.0],
    )


def test_a_409_is_counted_by_code_and_other_refusals_are_not(recorder: Recorder) -> None:
    assert refusal(errors.StaleBaseVersion("base version 1 is not the current version")).status_code == 409
    assert refusal(errors.WorkspaceNotFound("workspace not found")).status_code == 404
    assert recorder.counts(Metric.CONFLICT) == [(1, {"code": "STALE_BASE_VERSION"})]


@pytest.mark.parametrize("event", ["consent bumped", "key session revoked", "writer demoted"])
def test_a_fence_refusal_is_counted_by_its_predicate(recorder: Recorder, event: str) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, key_session_id=w.key_sessions.open(EDITOR, ws, 3600, ALL_SCOPES).id)
    retire_by(event)(w, ws, admitted)
    w.capture_add(ws, admitted, "- a line the fence refuses")
    expected = {"operation": "capture", "predicate": PREDICATE_OF_EVENT[event].value}
    assert recorder.counts(Metric.FENCE_REFUSAL) == [(1, expected)]


def test_a_committed_capture_is_no_refusal_and_its_redactions_are_counted_by_kind(recorder: Recorder) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR)
    adm = admitted.admission
    edits = [AddEdit(line="- write to ops@example.com or ops2@example.com")]
    w.capture.capture(ws, adm.id, admitted.credential, edits, 1, f"memory:{adm.id}")
    assert recorder.counts(Metric.FENCE_REFUSAL) == []
    assert recorder.counts(Metric.REDACTION) == [(2, {"kind": "email"})]


def test_a_recall_is_counted_by_status(recorder: Recorder) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR)
    assert w.recall.recall(ws, admitted.admission.id, admitted.credential).status is RecallStatus.OK
    w.access.set_ai(OWNER, ws, False)
    w.access.set_ai(OWNER, ws, True)
    assert w.recall.recall(ws, admitted.admission.id, admitted.credential).status is RecallStatus.NO_ACCESS
    assert recorder.counts(Metric.RECALL) == [(1, {"status": "ok"}), (1, {"status": "no_access"})]


def test_redaction_counts_kinds_never_text(recorder: Recorder) -> None:
    redact("call +1 415 555 0100, mail a@example.org")
    emitted = recorder.counts(Metric.REDACTION)
    assert sorted(dims["kind"] for _, dims in emitted) == ["email", "phone"]
    assert "example" not in json.dumps(recorder.emitted)
