"""What the operations and turn benchmarks run on: the sample document, `auto` workspaces and their
admissions, seeded entries, and the tables writers rotate through.

Writers get tables that do not grow without bound: moto deep-copies the whole table for every item of every
TransactWriteItems (its rollback copy), so a table that grew during the run would slow each later
transaction. A writing benchmark therefore runs on an `auto` workspace on a table of its own that is
replaced by a fresh one every ROTATE_EVERY runs (untimed): `RotatingScenes`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3

from scripts.localstack.resources import create_table
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.edits import Edit
from workspace_memory.document.policy import Mode
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryType
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.capture import Outcome
from workspace_memory.workspaces.access import ShareType

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DOCUMENT_BYTES = 2048
ROTATE_EVERY = 25
"""Runs of a writing benchmark (warm-up included) on one table before it moves to a fresh one."""
OWNER = "bench-owner"


def entry_draft(n: int) -> Draft:
    """An entry of realistic size: a one-line title and summary and a short Markdown body."""
    body = f"Decision {n}: deploys go out on Tuesdays; the on-call owner rotates weekly. " * 4
    return Draft(EntryType.FACT, EntryText(f"Deploy rule {n}", f"deploys on Tuesdays ({n})", body))


def sample_document(size: int = DOCUMENT_BYTES) -> str:
    """Deterministic Markdown of exactly `size` ASCII bytes, like a team's memory document."""
    lines = ["# Team memory", ""]
    number = 0
    while sum(len(text) + 1 for text in lines) < size:
        lines.append(f"- Decision {number:03d}: deploys go out on Tuesdays; the on-call owner rotates weekly.")
        number += 1
    return "\n".join(lines)[:size]


class Rotation:
    """When a writing benchmark moves to a fresh table: before its first run, then every `every` runs."""

    def __init__(self, every: int) -> None:
        if every < 1:
            raise ValueError("a rotation needs at least one run per table")
        self.every = every
        self.runs = 0
        self.tables = 0

    def due(self) -> bool:
        """Counts one run; True when that run should start on a fresh table."""
        fresh = self.runs % self.every == 0
        self.runs += 1
        if fresh:
            self.tables += 1
        return fresh


def raw_client(settings: Settings) -> DynamoDBClient:
    session = boto3.session.Session(region_name=settings.region)
    return session.client("dynamodb", endpoint_url=settings.endpoint_url)


def auto_workspace(services: Services, name: str, content: str) -> tuple[str, int]:
    """A shared workspace in `auto` with AI on and `content` saved: what recall and capture run against."""
    workspace_id = services.access.create_workspace(OWNER, name, ShareType.SHARED)
    services.access.set_ai(OWNER, workspace_id, True)
    services.policy.set(OWNER, workspace_id, Mode.AUTO, 0)
    commit = services.document.save(OWNER, workspace_id, content, 0)
    return workspace_id, commit.version.version


def admit(services: Services, workspace_id: str, conversation_id: str, message: str | None = None) -> Admitted:
    request = AdmissionRequest(
        conversation_id=conversation_id,
        workspace_id=workspace_id,
        user_id=OWNER,
        idempotency_key=uuid.uuid4().hex,
        message=message,
    )
    return services.admission.admit(request)


@dataclass
class Scene:
    """An `auto` workspace on a table of its own, and its head version as the benchmark moved it."""

    services: Services
    workspace_id: str
    head_version: int


class RotatingScenes:
    """Scenes on tables that are replaced by fresh ones every `every` runs (see the module docstring: moto
    copies a whole table per transaction item). Tables are created and dropped untimed, from `before`."""

    def __init__(self, base: Services, prefix: str, content: str, every: int = ROTATE_EVERY) -> None:
        if base.settings.endpoint_url is None:
            raise ValueError("rotating tables needs the moto endpoint")
        self._base = base
        self._endpoint = base.settings.endpoint_url
        self._prefix = prefix
        self._content = content
        self._admin = raw_client(base.settings)  # not attached to any recorder
        self.rotation = Rotation(every)
        self._scene: Scene | None = None

    @property
    def current(self) -> Scene:
        if self._scene is None:
            raise RuntimeError("no scene yet: call advance() first")
        return self._scene

    def advance(self) -> Scene:
        """Counts a run; moves to a fresh table (and drops the old one) when its turn has come."""
        if self.rotation.due():
            old = self._scene
            table = f"{self._prefix}-{self.rotation.tables}"
            create_table(self._endpoint, table)
            # The same clients (so the same call recorder) and a new cipher: a process writing to a new table.
            services = build_services(
                self._base.settings.model_copy(update={"table_name": table}), clients=self._base.clients
            )
            workspace_id, head = auto_workspace(services, self._prefix, self._content)
            self._scene = Scene(services, workspace_id, head)
            if old is not None:
                self._admin.delete_table(TableName=old.services.settings.table_name)
        return self.current


def seed_entries(services: Services, workspace_id: str, count: int) -> None:
    for n in range(count):
        services.entries.create(OWNER, workspace_id, entry_draft(n))


def capture(services: Services, workspace_id: str, admitted: Admitted, edits: Sequence[Edit], base: int) -> int:
    """A capture under `admitted` that must commit; returns the new head version."""
    adm = admitted.admission
    result = services.capture.capture(workspace_id, adm.id, admitted.credential, edits, base, f"memory:{adm.id}")
    if result.outcome is not Outcome.COMMITTED or result.version is None:
        raise RuntimeError(f"capture did not commit: {result.outcome.value} {result.predicate}")
    return result.version
