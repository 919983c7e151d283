"""What every record module shares: leaving unset optional attributes out of an item, reading optional
numbers and bytes, and judging an item's `ttl` (DynamoDB's TTL attribute) without its record."""

from __future__ import annotations

from typing import Any

from workspace_memory.store.ports import Item


def present(attributes: Item) -> Item:
    """The attributes that are set: an optional attribute that is not set is not stored at all (no nulls)."""
    return {name: value for name, value in attributes.items() if value is not None}


def optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def optional_bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def expired(item: Item, now: float) -> bool:
    """An item past its `ttl` is gone, whether or not DynamoDB's TTL deleter has removed it yet (it may take
    days): every read judges `ttl` itself."""
    ttl = item.get("ttl")
    return ttl is not None and int(ttl) <= now
