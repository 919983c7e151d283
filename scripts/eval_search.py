"""`make eval`: the search quality set through BM25 alone, embeddings alone and their fusion.

    python -m scripts.eval_search [--floors 0.05,0.10,0.15] [--locomo DIR]

Builds one `HybridIndex` over `tests/quality/entries.jsonl` with the local embedding model and prints, per
query kind and overall, recall@5 and MRR@10 (over queries with relevant ids) and, for the negatives, the share
that found nothing and the mean number of results. `--floors` repeats the table for other `MIN_COSINE`
values, the evidence the constant is chosen on. `--locomo DIR` adds LoCoMo (scripts/eval/locomo.py), read from a
folder holding the public `snap-research/locomo` data (never vendored), beside LangGraph's store with the same
embedder (the `peers` group) and the warm search time of both at one index of every turn; its embeddings are
cached under `--cache` (default /tmp/workspace-memory-eval), so a second run embeds only what changed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from scripts.eval import locomo, locomo_data, minilm, speed
from scripts.search_quality import (
    KINDS,
    MRR_K,
    RECALL_K,
    Query,
    build_index,
    cosine_floor,
    disjoint_queries,
    load_entries,
    load_queries,
    score,
)
from workspace_memory.search import engine as search
from workspace_memory.search.embedders import LocalEmbedder, TitanEmbedder
from workspace_memory.search.engine import Embedder, HybridIndex, Mode

MODES = (Mode.BM25, Mode.EMBEDDING, Mode.HYBRID)


def table(index: HybridIndex, queries: Sequence[Query]) -> list[str]:
    """The table's lines: one row per kind (and overall), one column group per mode."""
    head = f"{'kind':<13}{'n':>3}  " + "  ".join(f"{m.value:>20}" for m in MODES)
    sub = f"{'':<13}{'':>3}  " + "  ".join(f"{f'R@{RECALL_K}':>9} {f'MRR@{MRR_K}':>10}" for _ in MODES)
    lines = [head, sub]
    groups: list[tuple[str, list[Query]]] = [(k, [q for q in queries if q.kind == k]) for k in KINDS]
    groups.append(("all positive", [q for q in queries if q.relevant]))
    for name, group in groups:
        if not group:
            continue
        scores = [score(index, group, mode) for mode in MODES]
        if name == "negative":
            cells = [f"{f'{s.empty_share:.0%} empty':>9} {f'{s.mean_results:.1f} hits':>10}" for s in scores]
        else:
            cells = [f"{s.recall:>9.3f} {s.mrr:>10.3f}" for s in scores]
        lines.append(f"{name:<13}{len(group):>3}  " + "  ".join(cells))
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--floors", default="", help="comma-separated MIN_COSINE values to compare")
    parser.add_argument("--locomo", type=Path, help="a folder with LoCoMo's locomo10.json or locomo10.zip")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/workspace-memory-eval"), help="embedding cache")
    parser.add_argument(
        "--embedders",
        default="",
        help=f"comma-separated, of {', '.join(EMBEDDERS)} (default: the engine's, and MiniLM when the peers "
        "group is installed); LoCoMo runs the first only unless --locomo-all",
    )
    parser.add_argument("--locomo-all", action="store_true", help="LoCoMo with every embedder (MiniLM: minutes)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.embedders.split(",") if n.strip()] or default_embedders()
    embedders = [cached(name, args.cache) for name in names]
    entries = load_entries()
    queries = load_queries()
    disjoint = disjoint_queries([q for q in queries if q.relevant], entries)
    print(f"{len(entries)} entries, {len(queries)} queries")
    print(f"{len(disjoint)} (query, target) pairs share no token with their target (BM25 cannot see them)")
    engine_floor = search.MIN_COSINE
    floors = [float(f) for f in args.floors.split(",") if f.strip()] or [engine_floor]
    for embedder in embedders:
        index = build_index(entries, embedder)
        for floor in floors:
            with cosine_floor(floor):
                mark = " (the engine's)" if floor == engine_floor else ""
                print(f"\nmodel {embedder.model_id}, MIN_COSINE = {floor:.2f}{mark}")
                for line in table(index, queries):
                    print(line)
        print(f"query embedding p50 {embedding_ms(embedder):.3f} ms (one short question, uncached)")
    if args.locomo is not None:
        conversations = locomo_data.load(args.locomo)
        turns = sum(len(c.turns) for c in conversations)
        for embedder in embedders if args.locomo_all else embedders[:1]:
            print(f"\nLoCoMo, model {embedder.model_id}: {len(conversations)} conversations, {turns} turns; recall is")
            print("the share of evidence found")
            for line in locomo.table(locomo.evaluate(conversations, embedder)):
                print(line)
            print()
            for line in speed.table(conversations, embedder):
                print(line)
    for embedder in embedders:
        embedder.save()


EMBEDDERS = ("wordllama", "minilm", "titan")


def default_embedders() -> list[str]:
    return ["wordllama", "minilm"] if minilm.available() else ["wordllama"]


def cached(name: str, cache: Path) -> locomo.CachedEmbedder:
    """An embedder by name, its vectors cached between runs under `cache` (never in the repository)."""
    if name not in EMBEDDERS:
        raise SystemExit(f"unknown embedder {name!r}: one of {', '.join(EMBEDDERS)}")
    inner: Embedder
    if name == "titan":  # only when asked for: the one embedder that leaves the machine (AWS credentials)
        import boto3

        inner = TitanEmbedder(boto3.client("bedrock-runtime"))
    else:
        inner = LocalEmbedder() if name == "wordllama" else minilm.MiniLMEmbedder(cache)
    return locomo.CachedEmbedder(inner, cache / f"{inner.model_id}.npz")


def embedding_ms(embedder: locomo.CachedEmbedder) -> float:
    """The model's own time for one question (the cache bypassed), median of 21."""
    import time

    times = []
    for n in range(21):
        start = time.perf_counter()
        embedder.inner.embed([f"when did we agree to move the release train {n}?"])
        times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[len(times) // 2]


if __name__ == "__main__":
    main()
