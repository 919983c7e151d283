"""The keyring figures of scripts/bench and the call-count claims, on made-up figures (the measurement itself
needs moto: `make bench`)."""

from __future__ import annotations

import json

import pytest

from scripts.bench.report import acceptance, render_acceptance, render_keyring, report_json
from scripts.bench.stats import KEYRING, KMS_PER_OBJECT, KeyringCost, SchemeCost, Summary

pytestmark = pytest.mark.unit


def _cost(name: str, kms_per_op: float, encrypt_ms: float, decrypt_ms: float) -> SchemeCost:
    reads = 2 if name == KEYRING else 0
    return SchemeCost(name, 2, reads, 40.0, kms_per_op, kms_per_op, 0.0, encrypt_ms, decrypt_ms)


def test_ratios_are_keyring_over_kms_per_object() -> None:
    result = KeyringCost(10, 2048, _cost(KEYRING, 0.0, 1.0, 1.5), _cost(KMS_PER_OBJECT, 1.0, 4.0, 3.0))
    assert result.ratios() == {"encrypt": 0.25, "decrypt": 0.5, "kms calls": 0.0}
    report = render_keyring(result)
    assert "encrypt 0.25x, decrypt 0.50x, kms calls 0.00x" in report
    rows = [line.split(" | ") for line in report.splitlines() if " | " in line]
    assert [row[0].strip() for row in rows] == ["scheme", KEYRING, KMS_PER_OBJECT]
    assert [cell.strip() for cell in rows[2][4:6]] == ["1", "1"]  # KMS per encrypt, per decrypt


def test_a_zero_baseline_is_no_ratio() -> None:
    result = KeyringCost(1, 1, _cost(KEYRING, 0.0, 1.0, 1.0), _cost(KMS_PER_OBJECT, 0.0, 0.0, 1.0))
    assert result.ratios()["encrypt"] is None
    assert result.ratios()["kms calls"] is None
    assert "encrypt n/a" in render_keyring(result)


def _summary(name: str, calls: dict[str, float]) -> Summary:
    return Summary(name, None, 1, calls, 1.0, 1.0, None)


def test_acceptance_holds_for_warm_reads_without_kms_and_a_one_call_save() -> None:
    summaries = [
        _summary("read", {"dynamodb.TransactGetItems": 1, "kms.Decrypt": 0}),
        _summary("recall", {"dynamodb.TransactGetItems": 1, "dynamodb.PutItem": 1, "kms.Decrypt": 0}),
        _summary("save", {"dynamodb.TransactWriteItems": 1, "kms.Decrypt": 0}),
    ]
    assert all(holds for _, holds in acceptance(summaries))
    assert render_acceptance(acceptance(summaries)).count("[ok]") == 4


@pytest.mark.parametrize(
    ("name", "calls", "claim"),
    [
        ("read", {"dynamodb.TransactGetItems": 1, "kms.Decrypt": 0.01}, "read: 0 KMS"),
        ("save", {"dynamodb.TransactWriteItems": 1, "dynamodb.GetItem": 1}, "save: 1 DynamoDB"),
        ("save", {"dynamodb.TransactWriteItems": 1, "kms.GenerateDataKey": 1}, "save: 0 KMS"),
    ],
)
def test_acceptance_fails_on_any_extra_call(name: str, calls: dict[str, float], claim: str) -> None:
    fine = {
        "read": {"dynamodb.TransactGetItems": 1.0},
        "recall": {"dynamodb.TransactGetItems": 1.0},
        "save": {"dynamodb.TransactWriteItems": 1.0},
    }
    summaries = [_summary(n, calls if n == name else c) for n, c in fine.items()]
    failed = [c for c, holds in acceptance(summaries) if not holds]
    assert len(failed) == 1
    assert failed[0].startswith(claim)
    assert f"[FAILED] {failed[0]}" in render_acceptance(acceptance(summaries))


def test_a_missing_operation_fails_its_claims() -> None:
    assert [holds for _, holds in acceptance([])] == [False] * 4


def test_report_json_carries_the_keyring_and_the_claims() -> None:
    result = KeyringCost(10, 2048, _cost(KEYRING, 0.0, 1.0, 1.5), _cost(KMS_PER_OBJECT, 1.0, 4.0, 3.0))
    data = json.loads(
        json.dumps(report_json([_summary("save", {"dynamodb.TransactWriteItems": 1})], [], {}, keyring=result))
    )
    assert data["keyring"]["keyring"]["kms_calls_per_encrypt"] == 0.0
    assert data["keyring"]["kms"]["kms_calls_per_decrypt"] == 1.0
    assert data["keyring"]["ratios"] == {"encrypt": 0.25, "decrypt": 0.5, "kms calls": 0.0}
    assert {"claim": "save: 1 DynamoDB call per op", "holds": True} in data["acceptance"]
    assert report_json([], [], {})["keyring"] is None
