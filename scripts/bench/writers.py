"""The writing benchmarks: `save`, `capture`, `entry create` and `entry supersede`, each on rotating tables
(`scripts.bench.scenes`), its untimed step (a fresh table, an admission, a seeded chain) in `before`.
"""

from __future__ import annotations

from scripts.bench.scenes import OWNER, RotatingScenes, Scene, admit, capture, entry_draft
from workspace_memory.document.edits import AddEdit
from workspace_memory.turns.admission import Admitted


class SaveBench:
    """`save` of the sample document at the head, on rotating tables."""

    def __init__(self, scenes: RotatingScenes, content: str) -> None:
        self.scenes = scenes
        self._content = content

    def before(self) -> None:
        self.scenes.advance()

    def run(self) -> None:
        scene = self.scenes.current
        commit = scene.services.document.save(OWNER, scene.workspace_id, self._content, scene.head_version)
        scene.head_version = commit.version.version


class CaptureBench:
    """`capture` of one added line, on rotating tables; each run consumes an admission made in `before`."""

    def __init__(self, scenes: RotatingScenes) -> None:
        self.scenes = scenes
        self._admitted: Admitted | None = None
        self._count = 0

    def before(self) -> None:
        scene = self.scenes.advance()
        conversation = f"conv-bench-capture-{self.scenes.rotation.tables}"
        self._admitted = admit(scene.services, scene.workspace_id, conversation)

    def run(self) -> None:
        scene, admitted = self.scenes.current, self._admitted
        if admitted is None:
            raise RuntimeError("capture needs a fresh admission: run before() first")
        self._admitted = None
        self._count += 1
        edits = [AddEdit(line=f"- captured fact {self._count}")]
        scene.head_version = capture(scene.services, scene.workspace_id, admitted, edits, scene.head_version)


class EntryCreateBench:
    """`entry create` of a new chain, on rotating tables."""

    def __init__(self, scenes: RotatingScenes) -> None:
        self.scenes = scenes
        self._count = 0

    def before(self) -> None:
        self.scenes.advance()

    def run(self) -> None:
        scene = self.scenes.current
        self._count += 1
        scene.services.entries.create(OWNER, scene.workspace_id, entry_draft(self._count))


class EntrySupersedeBench:
    """`entry supersede` of one chain from its current revision, on rotating tables (the chain is made,
    untimed, on each fresh table)."""

    def __init__(self, scenes: RotatingScenes) -> None:
        self.scenes = scenes
        self._chain: tuple[str, int] = ("", 0)
        self._scene: Scene | None = None

    def before(self) -> None:
        scene = self.scenes.advance()
        if scene is not self._scene:  # a fresh table: make its chain
            self._scene = scene
            written = scene.services.entries.create(OWNER, scene.workspace_id, entry_draft(0))
            self._chain = (written.entry_id, written.revision)

    def run(self) -> None:
        scene = self.scenes.current
        entry_id, revision = self._chain
        written = scene.services.entries.supersede(OWNER, scene.workspace_id, entry_id, entry_draft(revision), revision)
        self._chain = (entry_id, written.revision)
