"""LoCoMo (Maharana et al., ACL 2024) as the eval reads it: conversations, their turns, observations and questions.

The data is the public `snap-research/locomo` repository's, never vendored here: `--locomo DIR` names a folder
holding `locomo10.json` (a list of samples), or `locomo10.zip`, or the zip's per-conversation `*.json` files, at
any depth. Both layouts are read: a sample's dialog under `conversation` and its facts under `observation`, or
(the zip's `locomo10_v2`) everything at the top level.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's question categories; 5 (adversarial: the answer is not in the conversation) is not answerable."""
ANSWERABLE = (1, 2, 3, 4)
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int


@dataclass(frozen=True)
class Observation:
    id: str
    speaker: str
    text: str
    dia_ids: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    observations: tuple[Observation, ...]
    questions: tuple[Question, ...]


def _samples(folder: Path) -> Iterator[tuple[str, Any]]:
    whole = sorted(folder.rglob("locomo10.json"))
    if whole and whole[0].stat().st_size:
        for n, sample in enumerate(json.loads(whole[0].read_text(encoding="utf-8"))):
            yield str(sample.get("sample_id", n)), sample
        return
    zips = sorted(folder.rglob("locomo10*.zip"))
    if zips:
        with zipfile.ZipFile(zips[0]) as archive:
            for name in sorted(n for n in archive.namelist() if n.endswith(".json")):
                yield from _parsed(Path(name).stem, json.loads(archive.read(name)))
        return
    for path in sorted(folder.rglob("*.json")):
        yield from _parsed(path.stem, json.loads(path.read_text(encoding="utf-8")))


def _parsed(stem: str, data: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(data, list):
        for n, sample in enumerate(data):
            yield str(sample.get("sample_id", f"{stem}-{n}")), sample
    elif isinstance(data, dict) and "qa" in data:
        yield stem, data


def _conversation(sample_id: str, sample: dict[str, Any]) -> Conversation:
    dialog = sample.get("conversation", sample)
    facts = sample.get("observation", sample)
    turns: list[Turn] = []
    for name, value in dialog.items():
        match = _SESSION.match(name)
        if match and isinstance(value, list):
            session = int(match.group(1))
            turns += [Turn(t["dia_id"], t["speaker"], t.get("text", ""), session) for t in value]
    turns.sort(key=lambda t: (t.session, int(t.dia_id.split(":")[1])))
    observations: list[Observation] = []
    for name, value in sorted(facts.items()):
        if name.endswith("_observation") and isinstance(value, dict):
            for speaker, rows in value.items():
                for text, dia_id in ((r[0], r[1]) for r in rows if len(r) >= 2):
                    dia_ids = tuple(_DIA.findall(str(dia_id)))
                    observations.append(Observation(f"{name}#{len(observations)}", speaker, text, dia_ids))
    questions = [
        Question(str(q["question"]), int(q["category"]), tuple(_DIA.findall(" ".join(map(str, q.get("evidence", []))))))
        for q in sample.get("qa", [])
    ]
    return Conversation(sample_id, tuple(turns), tuple(observations), tuple(questions))


def load(folder: Path) -> list[Conversation]:
    conversations = [_conversation(sample_id, sample) for sample_id, sample in _samples(folder)]
    if not conversations:
        raise SystemExit(f"no LoCoMo conversation under {folder} (locomo10.json, locomo10.zip or its *.json)")
    return conversations
