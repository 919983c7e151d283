"""scripts/keyring_bench.py's report, on made-up figures (the measurement itself needs moto)."""

from __future__ import annotations

import math

import pytest

from scripts.keyring_bench import KEYRING, KMS_PER_OBJECT, KeyringCost, SchemeCost, format_report

pytestmark = pytest.mark.unit


def _cost(name: str, kms_per_pair: float, encrypt_ms: float, decrypt_ms: float) -> SchemeCost:
    return SchemeCost(name, 2, 2 if name == KEYRING else 0, 40.0, kms_per_pair, 0.0, encrypt_ms, decrypt_ms)


def test_ratios_are_keyring_over_kms_per_object() -> None:
    result = KeyringCost(10, 2048, _cost(KEYRING, 0.0, 1.0, 1.5), _cost(KMS_PER_OBJECT, 2.0, 4.0, 3.0))
    assert result.ratios() == {"encrypt": 0.25, "decrypt": 0.5, "kms calls": 0.0}
    report = format_report(result)
    assert "encrypt 0.25x, decrypt 0.50x, kms calls 0.00x" in report
    assert [line.split()[0] for line in report.splitlines()[1:4]] == ["scheme", "keyring", "kms"]


def test_a_zero_baseline_is_no_ratio() -> None:
    result = KeyringCost(1, 1, _cost(KEYRING, 0.0, 1.0, 1.0), _cost(KMS_PER_OBJECT, 0.0, 0.0, 1.0))
    assert math.isnan(result.ratios()["encrypt"])
    assert math.isnan(result.ratios()["kms calls"])
