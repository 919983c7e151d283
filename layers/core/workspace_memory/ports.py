"""The small ports the domain talks through; adapters implement them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

Item = dict[str, Any]


class TransactionCancelled(Exception):
    """A transaction lost on its conditions; `reasons[i]` is the code of action i ("None" when it held).

    Cancellations for any other reason (conflicts, throttling) surface as `Unavailable` instead."""

    def __init__(self, reasons: list[str], olds: list[Item | None]) -> None:
        super().__init__("transaction cancelled: " + ",".join(reasons))
        self.reasons = reasons
        self.olds = olds

    def failed(self) -> list[int]:
        return [i for i, code in enumerate(self.reasons) if code == "ConditionalCheckFailed"]

    @property
    def only_conditions(self) -> bool:
        """True when every failure is a condition (not a conflict or throttle worth retrying)."""
        return all(code in ("None", "ConditionalCheckFailed") for code in self.reasons)


class Cipher(Protocol):
    """Envelope encryption bound to an encryption context that is verified on decrypt."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes: ...

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes: ...


class Table(Protocol):
    """The single DynamoDB table, in native Python types (ints come back as ints)."""

    def get(self, pk: str, sk: str) -> Item | None: ...

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[Item | None]:
        """One consistent snapshot of several items (a transactional read)."""
        ...

    def query(
        self, pk: str, sk_prefix: str, *, limit: int, newest_first: bool, start_after: str | None = None
    ) -> list[Item]: ...

    def put(self, item: Item) -> None:
        """Unconditional: anything that depends on state is a transaction (idempotent on retry)."""
        ...

    def transact(self, actions: Sequence[Mapping[str, Any]]) -> None:
        """All-or-nothing write; raises TransactionCancelled naming each failed action."""
        ...
