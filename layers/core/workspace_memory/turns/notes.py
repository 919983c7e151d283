"""Per-session working notes (docs/architecture.md#working-notes): one encrypted, revisioned item per notebook.

A notebook belongs to a (workspace, user, session): the admission freezes the turn's session id, and the
notes routes reach only that admission's notebook, so a reused session id is another user's separate,
empty notebook.

The agent's working-notes tools are the only writers. Every write is a compare-and-set on the
revision, so revisions are strictly monotonic and two writers can never both claim the same revision;
the tool-facing `update` retries a lost race exactly once and then reports the conflict. Notes are
bounded (32 KiB UTF-8) and refused, never truncated, above the cap. The item holds only ciphertext,
its digest, sizes and revision: never the text. A TTL, refreshed on every write, lets abandoned
sessions expire.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workspace_memory.governance.redaction import Finding, redact_written
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    WorkspaceNotFound,
)
from workspace_memory.kernel.ids import require_identifier
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.store import keys
from workspace_memory.store.changes import Label, ReplaceRevision, WorkspaceLive
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.turn_records import NotesRecord, notes_revision
from workspace_memory.turns.admission import AdmissionRef
from workspace_memory.turns.authority import read_authority
from workspace_memory.workspaces.keysessions import Scope

NOTES_MAX_BYTES = 32 * 1024
"""Cap on the UTF-8 size of one session's notes; exactly this many bytes is accepted."""

NOTES_TTL_SECONDS = 30 * 86400
"""A session untouched this long expires; every write pushes the expiry out again."""


class AdmissionRequired(InvalidInput):
    code = "ADMISSION_REQUIRED"


class AdmissionRetired(Forbidden):
    """The admission is authentic but expired, or its user lost membership, consent or the key session."""

    code = "ADMISSION_RETIRED"


class SessionNotFound(NotFound):
    """Also for a session id that is not the admission's own: the same bytes as one never used."""

    code = "SESSION_NOT_FOUND"


@dataclass(frozen=True)
class Notebook:
    workspace_id: str
    user_id: str
    session_id: str
    admission_id: str | None = field(default=None, compare=False)
    """The admission that opened it: each write records it, so the audit names the turn that wrote."""


class NotesTooLarge(PayloadTooLarge):
    code = "NOTES_TOO_LARGE"


class NotesConflict(Conflict):
    """The caller's expected revision was not the stored one; `current_revision` is what is stored."""

    code = "NOTES_REVISION_CONFLICT"

    def __init__(self, expected_revision: int, current_revision: int) -> None:
        super().__init__(
            f"expected notes revision {expected_revision}, current is {current_revision}",
            current_revision=current_revision,
        )
        self.current_revision = current_revision


@dataclass(frozen=True)
class Notes:
    text: str
    revision: int
    bytes: int
    updated_at: str | None
    redactions: tuple[Finding, ...] = ()
    """What redaction removed from the text written (counts per kind; never the text)."""

    @property
    def empty(self) -> bool:
        return self.text == ""


def notes_context(notebook: Notebook, revision: int) -> dict[str, str]:
    """Binds a ciphertext to its notebook and revision: a copy into another slot fails to decrypt."""
    return {
        "workspace": notebook.workspace_id,
        "kind": "notes",
        "user": notebook.user_id,
        "session": notebook.session_id,
        "revision": str(revision),
    }


def encode_notes(text: object) -> bytes:
    """The UTF-8 bytes of `text`, refused (with sizes only) above the cap."""
    if not isinstance(text, str):
        raise InvalidInput("notes must be a string")
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("notes must be valid Unicode text (no lone surrogates)") from None
    if len(raw) > NOTES_MAX_BYTES:
        raise NotesTooLarge(
            f"notes are {len(raw)} bytes; the cap is {NOTES_MAX_BYTES}", size=len(raw), limit=NOTES_MAX_BYTES
        )
    return raw


def _key(notebook: Notebook) -> keys.Key:
    return keys.notes(notebook.workspace_id, notebook.user_id, notebook.session_id)


class NotesService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

    def open(self, admission_id: str | None, credential: str | None, session_id: str) -> Notebook:
        """The notebook an admission may use: its own frozen session's, while the admission is live."""
        if not admission_id or not credential:
            raise AdmissionRequired("notes need the X-Admission-Id and X-Delivery-Credential headers")
        require_identifier(session_id, "session id")
        ref = AdmissionRef.parse(admission_id)
        authority = read_authority(self._table, admission_id, ref.workspace_id, credential)
        if authority.deleted:
            raise WorkspaceNotFound("workspace not found")
        admission = authority.admission
        if admission.session_id != session_id:
            raise SessionNotFound("session not found")
        authority.require_scope(Scope.NOTES)
        if not authority.has_access(self._clock.now()):
            raise AdmissionRetired("this admission no longer has access to the workspace")
        return Notebook(admission.workspace_id, admission.user_id, session_id, admission_id)

    def get(self, notebook: Notebook) -> Notes:
        """The current notes; a session never written (revision 0) or expired reads as empty."""
        record = NotesRecord.of(self._table.get(*_key(notebook)))
        if record is None:
            return Notes("", 0, 0, None)
        revision = record.revision
        if record.expired(self._clock.now()):
            # TTL deletion lags expiry (up to days): an expired item reads as empty, but keeps its
            # revision so a writer's compare-and-set against it still lines up.
            return Notes("", revision, 0, None)
        text = unseal(self._cipher, record.ciphertext, notes_context(notebook, revision), record.sha256)
        return Notes(text, revision, len(text.encode("utf-8")), record.updated_at)

    def put(self, notebook: Notebook, text: str, expected_revision: int) -> Notes:
        """Replace the notes iff the stored revision is `expected_revision` (0: none yet); writes +1.

        An empty text is a write like any other (a new revision with empty content), so clearing stays
        revision-checked and a racing writer still conflicts. The agent is the only writer: its text is redacted
        before it is encrypted (docs/architecture.md#redaction), and the cap holds for what is stored.
        """
        encode_notes(text)  # refuse over-cap or invalid text before spending time on detection
        redacted = redact_written(text)
        text = redacted.text
        raw = encode_notes(text)
        if isinstance(expected_revision, bool) or not isinstance(expected_revision, int) or expected_revision < 0:
            raise InvalidInput("expected revision must be a non-negative integer")
        revision = expected_revision + 1
        now = self._clock.now()
        sealed = seal(self._cipher, text, notes_context(notebook, revision))
        record = NotesRecord(
            workspace_id=notebook.workspace_id,
            ciphertext=sealed.ciphertext,
            sha256=sealed.sha256,
            bytes=sealed.bytes,
            revision=revision,
            updated_at=iso(now),
            ttl=int(now) + NOTES_TTL_SECONDS,
            admission_id=notebook.admission_id,
        )
        item = record.to_item(notebook.user_id, notebook.session_id)
        try:
            # A one-change transaction rather than a conditional put: its client token makes a retry after
            # a timeout idempotent, so a write that landed is never misreported as a conflict.
            self._table.transact([ReplaceRevision(item, expected_revision), WorkspaceLive(notebook.workspace_id)])
        except TransactionCancelled as exc:  # the revision it lost to, as the transaction judged it
            if Label.WORKSPACE in exc.failed():  # deleted since the turn's authority was read
                raise WorkspaceNotFound("workspace not found") from None
            raise NotesConflict(expected_revision, notes_revision(exc.seen(_key(notebook)))) from None
        return Notes(text, revision, len(raw), record.updated_at, redacted.findings)

    def update(self, notebook: Notebook, text: str) -> Notes:
        """The notes update tool's write: last writer wins, but never silently.

        One bounded retry against the revision the conflict reported; a second loss propagates as
        NotesConflict so the turn can say so rather than spin.
        """
        encode_notes(text)  # refuse over-cap text before touching the store
        expected = self._current_revision(notebook)
        try:
            return self.put(notebook, text, expected)
        except NotesConflict as exc:
            return self.put(notebook, text, exc.current_revision)

    def clear(self, notebook: Notebook) -> Notes:
        """The notes clear tool's write: an update to the empty text."""
        return self.update(notebook, "")

    def _current_revision(self, notebook: Notebook) -> int:
        """Only the revision: a writer need not decrypt what it is about to replace."""
        return notes_revision(self._table.get(*_key(notebook)))
