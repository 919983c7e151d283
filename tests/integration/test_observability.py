"""What operators see, through the real local stack (docs/operations.md): the EMF metrics the functions print
and their log lines carry no memory, note or entry text and no id as a dimension; each count the domain decides
lands with its dimensions; and every request is one log line."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from typing import Any
from urllib.parse import quote

import pytest

from tests.integration.test_isolation import admitted, capture, recall
from tests.support import Api, FunctionLogs, new_user

pytestmark = pytest.mark.integration

DIMENSIONS = {"service", "code", "status", "kind", "operation", "predicate", "origin"}
"""Every dimension a metric may carry (kernel/metrics.py); `service` is powertools' own."""


def _documents(log: str) -> list[dict[str, Any]]:
    """The JSON lines of the function log (the gateway's COLD START lines are not)."""
    return [json.loads(line) for line in log.splitlines() if line.startswith("{")]


def _metrics(documents: list[dict[str, Any]]) -> set[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(name, unit, dimensions) of every EMF document, its values checked to be numbers."""
    found = set()
    for emf in (d for d in documents if "_aws" in d):
        for directive in emf["_aws"]["CloudWatchMetrics"]:
            (dimensions,) = directive["Dimensions"]
            assert set(dimensions) <= DIMENSIONS, dimensions
            for metric in directive["Metrics"]:
                assert all(isinstance(v, float) for v in emf[metric["Name"]])
                dims = tuple(sorted((name, emf[name]) for name in dimensions if name != "service"))
                found.add((metric["Name"], metric["Unit"], dims))
    return found


def test_counts_and_log_lines_carry_no_text_and_each_request_is_one_line(api: Api, function_logs: FunctionLogs) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0})
    key_session = api.key_session(owner, ws)
    entry = {"scope": "workspace", "type": "fact", "title": f"{marker} title", "summary": f"{marker} sum", "body": ""}
    with function_logs.captured() as captured:
        statuses = [
            api.save(owner, ws, f"# Memory\n- {marker}\n", 0).status_code,
            api.save(owner, ws, f"# Memory\n- stale {marker}\n", 0).status_code,
            api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=entry).status_code,
            api.call("GET", f"/v1/workspaces/{ws}/search?q={quote(marker)}", user=owner).status_code,
        ]
        admission = admitted(api, f"conv-{uuid.uuid4().hex[:8]}", ws, owner, key_session, message=f"what of {marker}?")
        assert recall(api, ws, admission).json()["status"] == "ok"
        line = f"- {marker} mail {marker.lower()}@example.com"
        assert capture(api, ws, admission, [{"op": "add", "line": line}], 1).json()["outcome"] == "committed"
        refused = capture(api, ws, admission, [{"op": "add", "line": f"- {marker} again"}], 2).json()
        assert refused == {"outcome": "refused", "predicate": "admission"}
    assert statuses == [200, 409, 201, 200]
    requests_made = len(statuses) + 4  # the admission, the recall, two captures

    log = captured.getvalue()
    assert marker not in log
    assert marker.lower() not in log
    documents = _documents(log)
    emitted = _metrics(documents)
    assert {
        ("Conflict", "Count", (("code", "STALE_BASE_VERSION"),)),
        ("SearchLatency", "Milliseconds", (("origin", "route"),)),
        ("SearchLatency", "Milliseconds", (("origin", "recall"),)),
        ("Recall", "Count", (("status", "ok"),)),
        ("Redaction", "Count", (("kind", "email"),)),
        ("FenceRefusal", "Count", (("operation", "capture"), ("predicate", "admission"))),
    } <= emitted
    assert ws not in json.dumps(sorted(emitted))

    lines = [d for d in documents if "_aws" not in d]
    assert len(lines) == requests_made, [line["message"] for line in lines]
    per_request = Counter(line["function_request_id"] for line in lines)
    assert set(per_request.values()) == {1}
    assert next(line for line in lines if line["status"] == 409)["code"] == "STALE_BASE_VERSION"
    assert ws in log  # the request lines name the workspace: an id, in a log line, never a dimension
