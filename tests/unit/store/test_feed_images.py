"""What the change feed reads of a stream image (store/feed_images.py): only the attributes its kind's rule
names, and a stub of a purged version says so."""

from __future__ import annotations

import pytest

from workspace_memory.store import keys
from workspace_memory.store.feed_images import ImageFacts, read_image, stream_key

pytestmark = pytest.mark.unit


def test_a_version_image_gives_its_rules_attributes_only() -> None:
    key = keys.version("ws_1", 7)
    image = {"version": 7, "op": "save", "author": "olivia", "ciphertext": b"sealed", "sha256": "ab"}
    assert read_image(key, image) == ImageFacts("document-version", "ws_1", "7", 7, "save", "olivia")
    stub = {"version": 7, "op": "save", "author": "olivia", "purgedBy": "noah"}
    facts = read_image(key, stub)
    assert facts is not None
    assert (facts.stubbed, facts.stubbed_by) == (True, "noah")


def test_an_item_elsewhere_names_its_workspace_and_an_unknown_kind_gives_nothing() -> None:
    owner = read_image(keys.conversation_owner("c1"), {"workspaceId": "ws_1", "userId": "olivia"})
    assert owner == ImageFacts("conversation", "ws_1", "c1", None, None, "olivia")
    assert read_image(keys.conversation_owner("c1"), {}) is None  # no workspace named
    assert read_image(("HEALTH", "HEALTH"), {}) is None


def test_a_stream_key_must_be_the_tables_pk_and_sk() -> None:
    assert stream_key({"pk": "WS#ws_1", "sk": "META"}) == ("WS#ws_1", "META")
    assert stream_key({"pk": "WS#ws_1"}) is None
    assert stream_key({"pk": 1, "sk": "META"}) is None
