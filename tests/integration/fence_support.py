"""Builders for admission/recall/capture tests: a workspace in `auto` with AI on and a saved document."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from workspace_memory.adapters.aws import AwsClients
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.edits import AddEdit, Edit, RemoveEdit
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import MemoryState
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import CaptureResult
from workspace_memory.turns.notes import Notebook
from workspace_memory.workspaces.access import Role, ShareType

DOC = "# Memory\n- first fact\n"


@dataclass
class Scene:
    svc: Services
    clock: ManualClock
    owner: str
    ws: str

    def admit(
        self,
        conv: str | None = None,
        *,
        key: str | None = None,
        state: MemoryState | None = None,
        key_session: str | None = None,
        user: str | None = None,
        session: str | None = None,
        message: str | None = None,
    ) -> Admitted:
        """An admission in this workspace (a fresh conversation and idempotency key unless given), the owner's
        unless `user` is given."""
        return self.svc.admission.admit(
            AdmissionRequest(
                conversation_id=conv or f"conv-{uuid.uuid4().hex[:8]}",
                workspace_id=self.ws,
                user_id=user or self.owner,
                idempotency_key=key or uuid.uuid4().hex,
                memory_state=state,
                key_session_id=key_session,
                session_id=session,
                message=message,
            )
        )

    def notebook(self, session_id: str, user: str | None = None) -> Notebook:
        """The notebook a turn of `user` (the owner by default) in this workspace writes for `session_id`."""
        return Notebook(self.ws, user or self.owner, session_id)

    def capture(self, admitted: Admitted, line: str, base: int, *, op: str = "add") -> CaptureResult:
        edit: Edit = AddEdit(line=line) if op == "add" else RemoveEdit(line=line)
        adm = admitted.admission
        return self.svc.capture.capture(self.ws, adm.id, admitted.credential, [edit], base, f"memory:{adm.id}")

    def head(self) -> tuple[int, str]:
        doc = self.svc.document.read(self.owner, self.ws)
        return doc.version, doc.content

    def set_mode(self, mode: Mode) -> None:
        current = self.svc.policy.get(self.owner, self.ws)
        self.svc.policy.set(self.owner, self.ws, mode, current.revision)


def make_scene(
    settings: Settings, *, mode: Mode = Mode.AUTO, content: str | None = DOC, clients: AwsClients | None = None
) -> Scene:
    clock = ManualClock(time.time())
    svc = build_services(settings, clock=clock, clients=clients)
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    ws = svc.access.create_workspace(owner, "fence", ShareType.SHARED)
    svc.access.set_ai(owner, ws, True)
    if mode is not Mode.READ_ONLY:
        svc.policy.set(owner, ws, mode, 0)
    if content is not None:
        svc.document.save(owner, ws, content, 0)
    return Scene(svc, clock, owner, ws)


def add_member(scene: Scene, user: str, role: Role) -> None:
    scene.svc.access.put_member(scene.owner, scene.ws, user, role)


@dataclass(frozen=True)
class Event:
    """A competing event of a fence matrix: what lands between admission and the agent's write, and the
    predicate that must refuse the write when it landed first."""

    name: str
    predicate: Predicate
    land: Callable[[Scene, Admitted], object]
    needs_key_session: bool = False


def clear_document(scene: Scene, _: Admitted) -> None:
    version, _text = scene.head()
    scene.svc.document.clear(scene.owner, scene.ws, version)
