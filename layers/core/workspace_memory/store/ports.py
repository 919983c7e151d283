"""The small ports the domain talks through; adapters implement them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workspace_memory.governance.changefeed import FeedEvent
    from workspace_memory.store.changes import Change
    from workspace_memory.store.keys import Key

Item = dict[str, Any]


class TransactionCancelled(Exception):
    """A transaction lost on its conditions; `failed()` names the labels of the changes whose condition was
    false. Cancellations for any other reason (conflicts, throttling) surface as `Unavailable` instead.

    A failed compare-and-set (`judged.judged_key`) also brings back the item it was judged against, so a 409
    names the value that refused the write, not what a later read finds after others moved it on."""

    def __init__(self, failed_labels: Iterable[str], seen: Mapping[Key, Item | None] | None = None) -> None:
        self._failed = frozenset(failed_labels)
        self._seen = dict(seen or {})
        super().__init__("transaction cancelled: " + ",".join(sorted(self._failed)))

    def failed(self) -> frozenset[str]:
        return self._failed

    def saw(self, key: Key) -> bool:
        """Whether a compare-and-set on `key` failed, so `seen(key)` knows the item it was judged against."""
        return key in self._seen

    def seen(self, key: Key) -> Item | None:
        """The item at `key` as the cancelled transaction judged it; None: there was none (the "absent" value:
        version 0, revision 0, the default policy). KeyError unless `saw(key)`."""
        return self._seen[key]


class Cipher(Protocol):
    """Envelope encryption bound to an encryption context that is verified on decrypt."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes: ...

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes: ...


class KeyStore(Protocol):
    """Where each workspace's own key lives (the branch keys of the hierarchical keyring)."""

    def create_branch_key(self, workspace_id: str) -> str:
        """Creates the workspace's branch key and returns its id; the caller never sees key material."""
        ...

    def destroy_branch_key(self, workspace_id: str) -> int:
        """Deletes every item of the workspace's branch key (crypto-shredding: none of its ciphertexts can be
        decrypted by a process that does not hold the key already); idempotent. Returns how many it deleted."""
        ...


class Table(Protocol):
    """The single DynamoDB table, in native Python types (ints come back as ints)."""

    def get(self, pk: str, sk: str) -> Item | None: ...

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[Item | None]:
        """One consistent snapshot of up to 100 items (a transactional read); no keys, no read."""
        ...

    def query(
        self,
        pk: str,
        sk_prefix: str,
        *,
        limit: int,
        newest_first: bool,
        start_after: str | None = None,
        attributes: Sequence[str] | None = None,
    ) -> list[Item]:
        """Items of one partition by sort-key prefix; `attributes` projects them (always with `pk` and `sk`)."""
        ...

    def put(self, item: Item) -> None:
        """Unconditional: anything that depends on state is a transaction (idempotent on retry)."""
        ...

    def transact(self, changes: Sequence[Change]) -> None:
        """All-or-nothing write of the domain's changes; raises TransactionCancelled naming the failed labels."""
        ...

    def member_keys(
        self, user_id: str, sk_prefix: str, *, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """Keys of up to `limit` items that carry `userId` = `user_id` and a sort key starting with `sk_prefix`,
        after the key `start_after` (the `ByMember` index: eventually consistent, so a caller re-reads what it
        shows)."""
        ...

    def workspace_keys(
        self, workspace_id: str, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """Keys of up to `limit` items that carry `workspaceId` = `workspace_id`, after the key `start_after`
        (the `ByWorkspace` index: eventually consistent, so a caller that needs all of them loops until it
        finds none)."""
        ...


class EventPublisher(Protocol):
    """Where the change feed's events go (EventBridge in AWS)."""

    def publish(self, events: Sequence[FeedEvent]) -> set[int]:
        """Publishes at most `changefeed.MAX_BATCH` events in one call; returns the indexes of those that were
        not accepted (all of them when the call itself failed)."""
        ...
