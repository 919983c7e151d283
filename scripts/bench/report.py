"""The benchmark's tables and JSON report (pure; tested in tests/unit/test_bench_stats.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from scripts.bench.stats import ColdImport, KeyringCost, KmsScenario, Summary, TurnSummary


def format_count(value: float) -> str:
    """1.0 -> `1`, 0.5 -> `0.5`, 0.333 -> `0.33`."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def format_calls(counts: Mapping[str, float]) -> str:
    return " ".join(f"{name}={format_count(value)}" for name, value in counts.items()) or "(none)"


def format_ratio(value: float | None, baseline_name: str | None) -> str:
    if baseline_name is None:
        return "(baseline)"
    if value is None:
        return f"n/a (no {baseline_name})"
    return f"{value:.2f}x {baseline_name}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A plain-text table; `align` holds one `<` or `>` per column (default `<`)."""
    columns = len(headers)
    if any(len(row) != columns for row in rows):
        raise ValueError("every row needs one cell per header")
    aligns = align.ljust(columns, "<")
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = (f"{cell:{a}{w}}" for cell, a, w in zip(cells, aligns, widths, strict=True))
        return " | ".join(padded).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def render(summaries: Sequence[Summary]) -> str:
    rows = [
        [
            s.name,
            format_calls(s.calls_per_op),
            f"{s.median_ms:.2f}",
            f"{s.p90_ms:.2f}",
            format_ratio(s.median_ratio, s.baseline_name),
        ]
        for s in summaries
    ]
    return format_table(["operation", "AWS calls/op", "median ms", "p90 ms", "median vs baseline"], rows, "<<>><")


def render_kms(scenarios: Sequence[KmsScenario]) -> str:
    rows = [[s.scenario, str(s.reads), format_calls(s.kms_calls_per_read)] for s in scenarios]
    return format_table(["KMS calls per document read or recall", "reads", "KMS calls/read"], rows, "<><")


WARM_NO_KMS = ("read", "recall", "save")
"""The operations a warm process runs with no KMS call (the branch key is cached; docs/architecture.md#branch-keys)."""
ONE_DYNAMODB_CALL = ("save",)
"""The operations that are one DynamoDB call (a Save is one TransactWriteItems)."""


def _calls(summary: Summary, service: str) -> float:
    return sum(n for name, n in summary.calls_per_op.items() if name.startswith(f"{service}."))


def acceptance(summaries: Sequence[Summary]) -> list[tuple[str, bool]]:
    """The issue's call-count claims, each judged on the measured calls per operation (a missing operation
    fails its claim)."""
    by_name = {s.name: s for s in summaries}
    checks = []
    for name in WARM_NO_KMS:
        row = by_name.get(name)
        checks.append((f"{name}: 0 KMS calls per op in a warm process", row is not None and _calls(row, "kms") == 0))
    for name in ONE_DYNAMODB_CALL:
        row = by_name.get(name)
        checks.append((f"{name}: 1 DynamoDB call per op", row is not None and _calls(row, "dynamodb") == 1))
    return checks


def render_acceptance(checks: Sequence[tuple[str, bool]]) -> str:
    return "\n".join(f"[{'ok' if holds else 'FAILED'}] {claim}" for claim, holds in checks)


def render_keyring(result: KeyringCost) -> str:
    """Both schemes' cold pair and warm cost per encrypt and per decrypt, and the keyring's ratios."""
    rows = [
        [
            s.name,
            str(s.cold_kms_calls),
            str(s.cold_key_store_reads),
            f"{s.cold_ms:.1f}",
            format_count(s.kms_calls_per_encrypt),
            format_count(s.kms_calls_per_decrypt),
            format_count(s.key_store_reads_per_pair),
            f"{s.encrypt_ms:.3f}",
            f"{s.decrypt_ms:.3f}",
        ]
        for s in (result.keyring, result.kms)
    ]
    headers = [
        "scheme",
        "cold KMS",
        "cold reads",
        "cold ms",
        "KMS/encrypt",
        "KMS/decrypt",
        "reads/pair",
        "encrypt ms",
        "decrypt ms",
    ]
    ratios = ", ".join(
        f"{name} {'n/a' if value is None else f'{value:.2f}x'}" for name, value in result.ratios().items()
    )
    return "\n".join(
        [
            f"Keyring cost: {result.pairs} warm encrypt+decrypt pairs of {result.size} B per scheme, after one cold "
            "pair (medians; reads = key-store GetItem)",
            "",
            format_table(headers, rows, "<>>>>>>>>"),
            "",
            f"keyring / kms per object (warm): {ratios}",
        ]
    )


def render_turns(summaries: Sequence[TurnSummary]) -> str:
    rows = [
        [
            s.name,
            str(s.turns),
            format_count(s.rounds_per_turn),
            format_count(s.activities_per_round),
            f"{s.median_ms_per_round:.2f}",
            f"{s.p90_ms_per_round:.2f}",
            f"{s.median_ms_per_turn:.2f}",
            format_ratio(s.median_ratio, s.baseline_name),
        ]
        for s in summaries
    ]
    headers = [
        "turn",
        "turns",
        "rounds/turn",
        "activities/round",
        "median ms/round",
        "p90 ms/round",
        "median ms/turn",
        "median ms/round vs baseline",
    ]
    return format_table(headers, rows, "<>>>>>><")


def render_turn_calls(summaries: Sequence[TurnSummary]) -> str:
    rows = [[s.name, format_calls(s.api_calls_per_round), format_calls(s.codec_calls_per_round)] for s in summaries]
    return format_table(["turn", "AWS calls/round via the API", "KMS calls/round by the payload codec"], rows)


def render_cold_imports(rows: Sequence[ColdImport], baseline: str) -> str:
    def versus(value: float | None) -> str:
        return "(baseline)" if value is None else f"{value:.2f}x {baseline}"

    cells = [
        [
            f"import {r.module}",
            str(r.runs),
            f"{r.median_ms:.1f}",
            f"{r.p90_ms:.1f}",
            versus(r.ratio),
            f"{r.cpu_median_ms:.1f}",
            versus(r.cpu_ratio),
        ]
        for r in rows
    ]
    headers = ["cold import", "runs", "median ms", "p90 ms", "median vs baseline", "CPU median ms", "CPU vs baseline"]
    return format_table(headers, cells, "<>>><><")


SECTIONS = ("operations", "acceptance", "kms_per_read", "keyring", "turns", "cold_imports")
"""The report's own keys, which `meta` may not shadow."""


def report_json(
    summaries: Sequence[Summary],
    kms: Sequence[KmsScenario],
    meta: Mapping[str, Any],
    turns: Sequence[TurnSummary] = (),
    cold_imports: Sequence[ColdImport] = (),
    keyring: KeyringCost | None = None,
) -> dict[str, Any]:
    reserved = set(SECTIONS) & set(meta)
    if reserved:
        raise ValueError(f"meta may not use the report's own keys: {sorted(reserved)}")
    return {
        **meta,
        "operations": [asdict(s) for s in summaries],
        "acceptance": [{"claim": claim, "holds": holds} for claim, holds in acceptance(summaries)],
        "kms_per_read": [asdict(k) for k in kms],
        "keyring": None if keyring is None else {**asdict(keyring), "ratios": keyring.ratios()},
        "turns": [asdict(t) for t in turns],
        "cold_imports": [asdict(c) for c in cold_imports],
    }
