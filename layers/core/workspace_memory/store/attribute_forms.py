"""The classes an attribute of the table may have (decisions/0055): ids of declared formats, enumerations,
numbers, timestamps, hashes, sealed bytes, and lists and maps of those. `store/attributes` says which attribute
of which item kind has which; a `Form` tests one value in its item."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from workspace_memory.kernel import terms

AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""An agent persona (the owner of an `agent` entry, stored in clear): a lower-case id, never prose."""
ENTRY_ID = re.compile(r"en_[0-9a-f]{24}")
VERSION_NUMBER = re.compile(r"[0-9]{1,12}")
"""A document version as a citation names it."""
ISSUED_ID = re.compile(r"[a-z]{1,3}_[0-9a-f]{24,36}")
"""An id the service issued (`new_id`, `new_ordered_id`): a prefix and random hex."""
ADMISSION_ID = re.compile(r"adm_[0-9a-f]{24}\.[A-Za-z0-9_-]{1,400}")
"""An admission id: random hex, then the base64url JSON of the ids it binds (conversation, workspace, user,
key session; `turns/admission.py`): ids only, of the formats below."""
CALLER_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""A caller-chosen id (conversations, sessions, turns): `kernel.ids.IDENTIFIER`."""
USER_ID = re.compile(r"[A-Za-z0-9._:|-]{1,200}")
"""A user id from the identity provider (its `sub`)."""
WRITE_ID = re.compile(r"[0-9a-f]{16}")
"""An agent write's id in its key session's window (`entries/limits.py`: 8 random bytes, hex)."""
HEX64 = re.compile(r"[0-9a-f]{64}")
"""A SHA-256 or an HMAC-SHA-256, hex."""
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")
GENERATION = re.compile(r"\d{12}-[0-9a-f]{8}")
BRANCH_KEY_ID = re.compile(r"[a-z-]{1,16}/ws_[0-9a-f]{24}")
"""The key store's id of a workspace's branch key (`workspace/{ws}`; the in-memory key store's spelling too)."""
CITED = re.compile(r"en_[0-9a-f]{24}@\d{1,6}")
"""`entryId@revision`, as a receipt lists what recall named."""


@dataclass(frozen=True)
class Form:
    """An attribute's class: its name (what a violation reports) and the test of a value in its item."""

    name: str
    test: Callable[[object, Mapping[str, object]], bool]

    def holds(self, value: object, item: Mapping[str, object]) -> bool:
        return self.test(value, item)


def _matches(pattern: re.Pattern[str]) -> Callable[[object, Mapping[str, object]], bool]:
    return lambda value, _item: isinstance(value, str) and pattern.fullmatch(value) is not None


def id_of(name: str, pattern: re.Pattern[str]) -> Form:
    return Form(f"id:{name}", _matches(pattern))


def enum_of(*enums: type[StrEnum] | Iterable[str]) -> Form:
    allowed = frozenset(str(v) for e in enums for v in e)
    return Form("enum", lambda value, _item: isinstance(value, str) and value in allowed)


def _integral(value: object, _item: Mapping[str, object]) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | Decimal) and int(value) == value


def _sealed(value: object, _item: Mapping[str, object]) -> bool:
    return isinstance(value, bytes | bytearray) and len(value) > 0


def list_of(inner: Form) -> Form:
    return Form(
        f"list:{inner.name}",
        lambda value, item: isinstance(value, list | set | tuple) and all(inner.holds(v, item) for v in value),
    )


def times_by_id(ids: re.Pattern[str]) -> Form:
    """A map from ids of the format `ids` (random, issued here) to integers: keys that are not text either."""

    def test(value: object, item: Mapping[str, object]) -> bool:
        return isinstance(value, dict) and all(
            isinstance(k, str) and ids.fullmatch(k) is not None and INT.holds(v, item) for k, v in value.items()
        )

    return Form("times-by-id", test)


def map_of(fields: Mapping[str, Form]) -> Form:
    """A map whose keys are declared and whose values are of their declared class."""

    def test(value: object, item: Mapping[str, object]) -> bool:
        return isinstance(value, dict) and all(k in fields and fields[k].holds(v, item) for k, v in value.items())

    return Form("map", test)


def _owner(value: object, item: Mapping[str, object]) -> bool:
    """`-` for a workspace entry, the member's user id, or the agent's name (judged by the item's scope)."""
    scope = item.get("scope")
    if scope == terms.EntryScope.AGENT.value:
        return isinstance(value, str) and AGENT_NAME.fullmatch(value) is not None
    if scope == terms.EntryScope.MEMBER.value:
        return isinstance(value, str) and USER_ID.fullmatch(value) is not None
    return value == "-"


INT = Form("int", _integral)
WRITE_TIMES = times_by_id(WRITE_ID)
"""An agent write window: write ids → epoch milliseconds."""
BOOL = Form("bool", lambda value, _item: isinstance(value, bool))
SEALED = Form("sealed", _sealed)
"""aws-encryption-sdk ciphertext under the workspace's branch key (or, for a workspace's name, the KMS key)."""
TIMESTAMP = Form("timestamp", _matches(TIME))
HASH = Form("hash", _matches(HEX64))
ISSUED = id_of("issued", ISSUED_ID)
ADMISSION = id_of("admission", ADMISSION_ID)
CALLER = id_of("caller", CALLER_ID)
USER = id_of("user", USER_ID)
ENTRY = id_of("entry", ENTRY_ID)
CITED_ENTRIES = list_of(id_of("cited", CITED))
"""Entry revisions by id and revision (`en_…@3`): a receipt's, a candidate's possible conflicts."""
SCOPE_OWNER = Form("scope-owner", _owner)
CLEAR_TEXT = Form("clear-text", lambda value, _item: isinstance(value, str))
"""Free text in clear: a finding (`FINDINGS`), declared so that it is seen, not so that it passes unseen."""

KEY = {"pk": Form("key", lambda v, _i: isinstance(v, str)), "sk": Form("key", lambda v, _i: isinstance(v, str))}


@dataclass(frozen=True)
class ItemKind:
    """An item kind (named as the change feed names it) by its key prefixes, and its attributes."""

    name: str
    pk_prefix: str
    sk_prefix: str
    attributes: Mapping[str, Form]

    def matches(self, pk: str, sk: str) -> bool:
        exact = not self.sk_prefix.endswith("#")
        return pk.startswith(self.pk_prefix) and (sk == self.sk_prefix if exact else sk.startswith(self.sk_prefix))

    def form(self, name: str) -> Form | None:
        """The class of attribute `name`: declared by name, or by family (`versions#` for `versions#{userId}`,
        one attribute per member)."""
        form = self.attributes.get(name)
        family, _, member = name.partition("#")
        if form is None and member and USER_ID.fullmatch(member):
            form = self.attributes.get(family + "#")
        return form
