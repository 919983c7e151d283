"""What the change feed reads of a stream image, item kind by item kind (docs/architecture.md#the-change-feed).

`RULES` is the allowlist: for each kind of item (selected by its keys), the only attributes the feed reads,
never by copying the image. A kind with no rule (a kind added later, or `HEALTH`) is not read at all: each new
item kind joins the feed by adding its rule here (tests/unit/governance/test_changefeed.py fails for a key
builder in keys.py without one). `read_image` gives what one image says as `ImageFacts`; only ids, numbers,
status words and timestamps come out of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from workspace_memory.store.keys import Key

Image = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """How one item kind maps to an event. `pk_prefix` and `sk` select the items (`sk` ending in `#` is a
    prefix, anything else the whole sort key); the other fields name the only attributes read: `workspace`
    (None: the `WS#` partition key), `version`, `op` and `actor`. `id` derives the event's id from the keys
    and the image; `actor_from_key`, when set, derives the actor from the keys instead of an attribute."""

    kind: str
    pk_prefix: str
    sk: str
    id: Callable[[str, str, Image], object]
    workspace: str | None = None
    version: str | None = None
    op: str | None = None
    actor: str | None = None
    actor_from_key: Callable[[str, str], str] | None = None
    stubbed_by: str | None = None
    """An attribute that, when the image has it, makes the event's op `purge` and its actor that attribute's
    value: a version turned into a stub is audited as the purge it is, by whom, not as its original op."""
    published: bool = True
    """False for a kind the feed reads nothing of: an audit event repeats, ids only, what the feed already
    published of the items its transaction wrote."""

    def matches(self, pk: str, sk: str) -> bool:
        if not pk.startswith(self.pk_prefix):
            return False
        return sk.startswith(self.sk) if self.sk.endswith("#") else sk == self.sk


def _pk_id(pk: str, _sk: str, _image: Image) -> str:
    return pk.split("#", 1)[1]


def _sk_id(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#", 1)[1]


def _attribute(name: str) -> Callable[[str, str, Image], object]:
    def read(_pk: str, _sk: str, image: Image) -> object:
        return image.get(name)

    return read


def _version_id(_pk: str, sk: str, _image: Image) -> str:
    return str(int(sk.rsplit("#", 1)[1]))


def _notes_session(_pk: str, sk: str, _image: Image) -> str:
    return sk.rsplit("#", 1)[1]


def _notes_user(_pk: str, sk: str) -> str:
    return sk.removeprefix("NOTES#").rsplit("#", 1)[0]


def _entry_of_revision(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#")[1]


def _rate_holder(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#")[1]


def _rate_user(_pk: str, sk: str) -> str:
    return sk.split("#", 2)[2]


RULES: tuple[Rule, ...] = (
    Rule("workspace", "WS#", "META", _pk_id, version="consentRevision", actor="ownerId"),
    Rule("member", "WS#", "MEMBER#", _sk_id),
    Rule("policy", "WS#", "POLICY", _pk_id, version="policyRevision"),
    Rule("consolidation", "WS#", "CONSOLIDATION", _pk_id, version="revision", actor="updatedBy"),
    Rule("consolidation-run", "WS#", "CONSOLIDATIONRUN", _attribute("runId"), version="revision", actor="requestedBy"),
    Rule("document-head", "WS#", "DOC#HEAD", _pk_id, version="headVersion", op="op", actor="updatedBy"),
    Rule(
        "document-version",
        "WS#",
        "DOC#V#",
        _version_id,
        version="version",
        op="op",
        actor="author",
        stubbed_by="purgedBy",
    ),
    Rule("key-session", "WS#", "KEYSESSION#", _sk_id, actor="openedBy"),
    Rule("key-revocation", "WS#", "KEYREVOKED#", _sk_id, actor="revokedBy"),
    Rule("notes", "WS#", "NOTES#", _notes_session, version="revision", actor_from_key=_notes_user),
    Rule("entry", "WS#", "ENTRY#", _sk_id, version="revision", op="status", actor="author"),
    Rule("entry-revision", "WS#", "ENTRYREV#", _entry_of_revision, version="revision", op="status", actor="author"),
    Rule("entry-key", "WS#", "ENTRYKEY#", _attribute("entryId")),
    Rule("forgotten-source", "WS#", "ENTRYBLOCK#", _attribute("entryId")),
    Rule("entry-counter", "WS#", "ENTRIES", _pk_id, version="entriesRevision"),
    Rule("entry-key-secret", "WS#", "ENTRYSECRET", _pk_id),
    Rule("entry-candidate", "WS#", "ENTRYCAND#", _sk_id, version="revision", op="status", actor="proposedBy"),
    Rule("entry-save", "WS#", "ENTRYSAVE#", _sk_id),
    Rule("entry-rate", "WS#", "ENTRYRATE#", _rate_holder, version="writes", actor_from_key=_rate_user),
    Rule("search-snapshot", "WS#", "SEARCHSNAP#", _attribute("generation"), version="entriesRevision"),
    Rule("conversation", "CONV#", "OWNER", _pk_id, workspace="workspaceId", actor="userId"),
    Rule("credential-slot", "CONV#", "CREDENTIAL", _pk_id, workspace="workspaceId"),
    Rule("admission-key", "CONV#", "ADMKEY#", _attribute("admissionId"), workspace="workspaceId", actor="userId"),
    Rule(
        "receipt",
        "CONV#",
        "RECEIPT#",
        _attribute("admissionId"),
        workspace="workspaceId",
        version="revision",
        op="status",
    ),
    Rule("admission", "ADM#", "ADMISSION", _pk_id, workspace="workspaceId", op="status", actor="userId"),
    Rule("audit", "WS#", "AUDIT#", _sk_id, published=False),
    Rule("erasure", "WS#", "ERASURE#", _sk_id, published=False),
    Rule("export", "WS#", "EXPORT#", _sk_id, op="status", actor="requestedBy"),
    Rule("export-part", "WS#", "EXPORTPART#", _attribute("exportId"), published=False),
    Rule("import", "WS#", "IMPORT#", _sk_id, op="status", actor="requestedBy"),
    Rule("consolidation-record", "WS#", "CONSRUN#", _sk_id, op="status"),
    Rule("page", "WS#", "PAGE#", _sk_id, version="revision"),
    Rule("page-entry", "WS#", "PAGEENTRY#", _attribute("pageId")),
    Rule("entry-filing", "WS#", "FILED#", _attribute("entryId")),
    Rule("page-categories", "WS#", "PAGECATEGORIES", _pk_id, version="revision"),
)


def rule_for(pk: str, sk: str) -> Rule | None:
    return next((rule for rule in RULES if rule.matches(pk, sk)), None)


def _text(value: object) -> str | None:
    """An id or a status word, or nothing: any other type is left out rather than published."""
    return value if isinstance(value, str) and value else None


def _number(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return int(value)


def stream_key(stream_keys: Mapping[str, Any]) -> Key | None:
    """The item's key as a stream record names it (None: not the table's `pk`/`sk`)."""
    pk, sk = stream_keys.get("pk"), stream_keys.get("sk")
    if not isinstance(pk, str) or not isinstance(sk, str):
        return None
    return pk, sk


@dataclass(frozen=True)
class ImageFacts:
    """What the feed may say of one item: its kind, workspace and id, and the version, op and actor its rule
    reads. `stubbed`: the image is a stub (a purged version), made by `stubbed_by`."""

    kind: str
    workspace: str
    id: str
    version: int | None
    op: str | None
    actor: str | None
    stubbed: bool = False
    stubbed_by: str | None = None


def read_image(key: Key, image: Image) -> ImageFacts | None:
    """What `image` (of the item at `key`) says under its kind's rule; None for a kind the feed does not
    publish, or an image that names no workspace or id."""
    pk, sk = key
    rule = rule_for(pk, sk)
    if rule is None or not rule.published:
        return None
    workspace = _pk_id(pk, sk, image) if rule.workspace is None else _text(image.get(rule.workspace))
    item_id = _text(rule.id(pk, sk, image))
    if workspace is None or item_id is None:
        return None
    actor = rule.actor_from_key(pk, sk) if rule.actor_from_key else _text(image.get(rule.actor or ""))
    stubbed = rule.stubbed_by is not None and rule.stubbed_by in image
    return ImageFacts(
        kind=rule.kind,
        workspace=workspace,
        id=item_id,
        version=_number(image.get(rule.version)) if rule.version else None,
        op=_text(image.get(rule.op)) if rule.op else None,
        actor=actor,
        stubbed=stubbed,
        stubbed_by=_text(image.get(rule.stubbed_by)) if stubbed and rule.stubbed_by else None,
    )
