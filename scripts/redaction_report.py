"""The redaction corpus (issue 17): loading it, running it through `redact`, recall and false positives per kind.

Shared by `python -m scripts.redaction_report` (the table and the speed, for the decision note) and
tests/unit/governance/test_redaction_corpus.py (the floors the table must keep), so both measure the same thing.

A positive is a line with one secret in it and the exact substring that must be gone after redaction; a
benign line is one a team's memory holds that redaction must leave byte for byte as it is.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from workspace_memory.governance.redaction import redact
from workspace_memory.kernel.terms import RedactionKind

CORPUS_DIR = Path(__file__).resolve().parent.parent / "tests" / "unit" / "governance" / "redaction_corpus"
POSITIVES_FILE = CORPUS_DIR / "positives.jsonl"
BENIGN_FILE = CORPUS_DIR / "benign.jsonl"


@dataclass(frozen=True)
class Positive:
    kind: RedactionKind
    form: str
    text: str
    secret: str


@dataclass(frozen=True)
class Benign:
    topic: str
    text: str


@dataclass(frozen=True)
class Row:
    """One line of the table: a kind's positives found (recall) or a topic's benign lines changed."""

    name: str
    total: int
    hits: int

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


@dataclass(frozen=True)
class Report:
    recall: tuple[Row, ...]
    false_positives: tuple[Row, ...]
    missed: tuple[Positive, ...]
    changed: tuple[Benign, ...]

    @property
    def overall_recall(self) -> float:
        return sum(r.hits for r in self.recall) / sum(r.total for r in self.recall)

    @property
    def false_positive_rate(self) -> float:
        return sum(r.hits for r in self.false_positives) / sum(r.total for r in self.false_positives)


def _rows(path: Path) -> Iterator[dict[str, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield cast(dict[str, str], json.loads(line))


def load_positives(path: Path = POSITIVES_FILE) -> list[Positive]:
    return [Positive(RedactionKind(r["kind"]), r["form"], r["text"], r["secret"]) for r in _rows(path)]


def load_benign(path: Path = BENIGN_FILE) -> list[Benign]:
    return [Benign(r["topic"], r["text"]) for r in _rows(path)]


LEFTOVER = 8
"""A run of this many characters of a secret still in the redacted text is a tail kept, not a secret gone."""


def is_found(positive: Positive) -> bool:
    """Something was reported, and no part of the secret is left: not the whole, nor any `LEFTOVER` of its
    characters in a row (a marker that stops short of a long key's end keeps its tail)."""
    redacted = redact(positive.text)
    secret = positive.secret
    runs = {secret[i : i + LEFTOVER] for i in range(max(1, len(secret) - LEFTOVER + 1))}
    return bool(redacted.findings) and not any(run in redacted.text for run in runs)


def evaluate(positives: Sequence[Positive], benign: Sequence[Benign]) -> Report:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    missed = []
    for positive in positives:
        found = is_found(positive)
        by_kind[positive.kind.value].append(found)
        if not found:
            missed.append(positive)
    by_topic: dict[str, list[bool]] = defaultdict(list)
    changed = []
    for line in benign:
        touched = redact(line.text).text != line.text
        by_topic[line.topic].append(touched)
        if touched:
            changed.append(line)
    order = [k.value for k in RedactionKind if k.value in by_kind]
    return Report(
        recall=tuple(Row(k, len(by_kind[k]), sum(by_kind[k])) for k in order),
        false_positives=tuple(Row(t, len(v), sum(v)) for t, v in sorted(by_topic.items())),
        missed=tuple(missed),
        changed=tuple(changed),
    )


def lines_per_second(texts: Sequence[str], rounds: int = 3) -> float:
    """Warm throughput of `redact` over the corpus lines (the libraries loaded once, as in a warm Lambda)."""
    for text in texts:
        redact(text)
    start = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            redact(text)
    return rounds * len(texts) / (time.perf_counter() - start)


def table(report: Report) -> str:
    out = ["| kind | positives | redacted | recall |", "|---|---|---|---|"]
    out += [f"| {r.name} | {r.total} | {r.hits} | {r.rate:.1%} |" for r in report.recall]
    total = sum(r.total for r in report.recall)
    out.append(f"| **all** | {total} | {sum(r.hits for r in report.recall)} | {report.overall_recall:.1%} |")
    out += ["", "| benign topic | lines | changed | false positives |", "|---|---|---|---|"]
    out += [f"| {r.name} | {r.total} | {r.hits} | {r.rate:.1%} |" for r in report.false_positives]
    lines = sum(r.total for r in report.false_positives)
    changed = sum(r.hits for r in report.false_positives)
    out.append(f"| **all** | {lines} | {changed} | {report.false_positive_rate:.1%} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--misses", action="store_true", help="list the forms missed and the topics changed")
    args = parser.parse_args(argv)
    positives, benign = load_positives(), load_benign()
    start = time.perf_counter()
    report = evaluate(positives, benign)
    cold = time.perf_counter() - start
    print(table(report))
    speed = lines_per_second([p.text for p in positives] + [b.text for b in benign])
    print(f"\nfirst pass (imports the detectors' libraries): {cold:.2f} s; warm: {speed:,.0f} lines/s")
    if args.misses:
        for positive in report.missed:
            print(f"missed {positive.kind.value}: {positive.form}")
        for line in report.changed:
            print(f"changed {line.topic}: {redact(line.text).findings}")


if __name__ == "__main__":
    main()
