"""Consolidation (issue 22): one run's model calls, AWS calls and wall time at 100 and 1,000 entries, and the
precision of its proposals on a seeded set, with the `scripted` judge (deterministic: it answers what the
similarity rule reads).

Each size has a workspace of its own, seeded through `EntryService.create` (the real write path). Per 100
entries, 5 duplicate pairs and 5 contradictions are planted (the same subject twice: one reworded, one with
another claim); the rest are entries about distinct subjects written from one template, so their vectors are
near one another as real notes of one team are. The run is the workflow's steps called in-process, in its
order: the pairs step (`ConsolidationService.pairs`, which loads the search index as a cold search does, from the
snapshot when there is one), one judging call per pair through the provider seam, the proposals, the run record.
The baseline is the workspace's first cold search in the same run (it decrypts every revision and stores the
snapshot the run then reads): a run's cost is said in cold searches.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from scripts.bench.report import format_calls, format_table
from scripts.bench.stats import CallRecorder, calls_per_op
from workflows.consolidation_activities import judging_request, verdict_of
from workflows.providers.scripted import ScriptedProvider
from workspace_memory.bootstrap import Services, build_embedder, build_services
from workspace_memory.consolidation.contract import JudgedPair, PairSide
from workspace_memory.consolidation.service import ConsolidationService, Verdict
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryType
from workspace_memory.search.claims import Relation
from workspace_memory.search.entry_search import SearchService, WarmIndexes
from workspace_memory.workspaces.access import ShareType

SIZES = (100, 1000)
OWNER = "bench-consolidation-owner"
ADJECTIVES = (
    "amber", "brisk", "cobalt", "dusty", "eager", "frosty", "gilded", "hollow", "ivory", "jolly",
    "keen", "lunar", "mellow", "nimble", "opal", "plucky", "quiet", "rustic", "silver", "tidy",
    "umber", "vivid", "woolly", "zesty", "arctic",
)  # fmt: skip
NOUNS = (
    "anchor", "beacon", "canyon", "dynamo", "ember", "falcon", "glacier", "harbor", "island", "jetty",
    "kernel", "lantern", "meadow", "nebula", "orchard", "pylon", "quarry", "rocket", "summit", "tundra",
    "upland", "valley", "willow", "yonder", "zephyr", "bastion", "citadel", "delta", "estuary", "fjord",
    "grotto", "hamlet", "inlet", "jungle", "knoll", "lagoon", "mesa", "nook", "oasis", "plateau",
)  # fmt: skip
TEAMS = ("red", "blue", "green", "orange", "purple", "teal", "gold", "grey")


def subject(n: int) -> str:
    return f"{ADJECTIVES[n % len(ADJECTIVES)]} {NOUNS[(n // len(ADJECTIVES)) % len(NOUNS)]}"


def _fact(title: str, summary: str) -> Draft:
    return Draft(EntryType.FACT, EntryText(title.title(), summary, ""))


@dataclass(frozen=True)
class Seeded:
    ws: str
    planted: dict[tuple[str, str], Relation]
    """(older, newer) entry ids of each planted pair, and what it is."""


def seed(services: Services, entries: int) -> Seeded:
    if entries > len(ADJECTIVES) * len(NOUNS):  # past it, subjects repeat: the filler would plant pairs of its own
        raise ValueError(f"at most {len(ADJECTIVES) * len(NOUNS)} entries of distinct subjects")
    ws = services.access.create_workspace(OWNER, f"consolidation-{entries}", ShareType.SHARED)
    planted: dict[tuple[str, str], Relation] = {}
    pairs = entries // 10  # 5 duplicates and 5 contradictions per 100 entries: 2 entries each
    for k in range(pairs):
        name = subject(k)
        first = services.entries.create(OWNER, ws, _fact(name, f"The {name} is kept in room {k + 10}")).entry_id
        if k % 2 == 0:
            second_text = f"The {name} is kept in room {k + 10}, as agreed"
            relation = Relation.DUPLICATE
        else:
            second_text = f"The {name} is kept in room {k + 510}"  # two digits or more: the tokenizer keeps them
            relation = Relation.CONFLICT
        second = services.entries.create(OWNER, ws, _fact(name, second_text)).entry_id
        planted[(first, second)] = relation
    for n in range(pairs, entries - pairs):
        name = subject(n)
        services.entries.create(OWNER, ws, _fact(name, f"The {name} belongs to the {TEAMS[n % 8]} team"))
    return Seeded(ws, planted)


@dataclass(frozen=True)
class RunResult:
    entries: int
    planted: int
    pairs: int
    judged: int
    left: int
    model_calls: int
    proposed: int
    correct: int
    """Proposals that name a planted pair, with the planted relation."""
    run_ms: float
    run_calls: dict[str, float]
    search_ms: float
    search_calls: dict[str, float]


def _fresh(settings: Settings, recorder: CallRecorder) -> tuple[Services, SearchService]:
    """A new process's state: new clients, cold caches, no warm index. The run's reads the snapshot the baseline's
    cold search stored, as any process after the first search of a workspace does."""
    fresh = build_services(settings)
    recorder.attach(fresh.clients.dynamodb, fresh.clients.kms, fresh.clients.key_store)
    return fresh, SearchService(fresh.table, fresh.cipher, fresh.clock, build_embedder(settings), WarmIndexes())


def measure(settings: Settings, entries: int) -> RunResult:
    seeded = seed(build_services(settings), entries)
    recorder = CallRecorder()
    fresh, search = _fresh(settings, recorder)
    mark, start = len(recorder.calls), time.perf_counter()
    search.search(OWNER, seeded.ws, "where is the amber anchor kept", 5)
    search_ms, search_calls = (time.perf_counter() - start) * 1000, recorder.since(mark)

    fresh, search = _fresh(settings, recorder)
    service = ConsolidationService(fresh.table, fresh.clock, search)
    judge = ScriptedProvider()
    mark, start = len(recorder.calls), time.perf_counter()
    found = service.pairs(seeded.ws, "cr_" + "b" * 24, "owner")
    verdicts: list[Verdict] = []
    for pair in found.pairs:
        retired, kept = (PairSide.model_validate(d, from_attributes=True) for d in (pair.retired, pair.kept))
        request = judging_request(JudgedPair(retired=retired, kept=kept, reading=pair.reading.value))
        relation = Relation(verdict_of(judge.complete(request).text))
        verdicts.append(Verdict(pair.retired.entry_id, 1, pair.kept.entry_id, 1, relation))
    counts = service.propose(seeded.ws, "cr_" + "b" * 24, [v for v in verdicts if v.relation is not Relation.UNRELATED])
    service.finish(seeded.ws, "cr_" + "b" * 24, counts)
    run_ms, run_calls = (time.perf_counter() - start) * 1000, recorder.since(mark)
    proposed = [v for v in verdicts if v.relation is not Relation.UNRELATED]
    correct = sum(seeded.planted.get((v.retired_id, v.kept_id)) is v.relation for v in proposed)
    return RunResult(
        entries=entries,
        planted=len(seeded.planted),
        pairs=found.counts.pairs,
        judged=len(verdicts),
        left=found.counts.left,
        model_calls=len(verdicts),
        proposed=counts.proposed,
        correct=correct,
        run_ms=run_ms,
        run_calls=calls_per_op([run_calls]),
        search_ms=search_ms,
        search_calls=calls_per_op([search_calls]),
    )


def render(results: Sequence[RunResult]) -> str:
    rows = [
        [
            f"{r.entries:,}",
            str(r.planted),
            str(r.pairs),
            f"{r.judged} (+{r.left} left)",
            str(r.model_calls),
            str(r.proposed),
            f"{r.correct / r.proposed:.2f}" if r.proposed else "-",
            f"{r.correct / r.planted:.2f}" if r.planted else "-",
            f"{r.run_ms:.0f}",
            f"{r.run_ms / r.search_ms:.1f}x",
            format_calls(r.run_calls),
        ]
        for r in results
    ]
    headers = ["entries", "planted", "pairs", "judged", "model calls", "proposed", "precision", "recall",
               "run ms", "vs cold search", "AWS calls/run"]  # fmt: skip
    table = format_table(headers, rows, ">>>>>>>>>><")
    return "\n".join(
        [
            "Consolidation: one run per size, the workflow's steps in-process with the scripted judge; planted pairs "
            "per 100 entries: 5 duplicates, 5 contradictions; at most 50 pairs judged a run (the rest `left`)",
            "",
            table,
            "",
            *(f"cold search baseline at {r.entries:,}: {r.search_ms:.0f} ms, {format_calls(r.search_calls)}"
              for r in results),
        ]
    )  # fmt: skip


def consolidation_benchmark(settings: Settings, sizes: Sequence[int] = SIZES) -> tuple[str, list[RunResult]]:
    results = [measure(settings, n) for n in sizes]
    return render(results), results
