"""The DynamoDB adapter's reads at their edges, on the real moto server: a transactional read of no keys asks
nothing (DynamoDB refuses an empty TransactGetItems, which once turned a purge's last batch into a 503)."""

from __future__ import annotations

import pytest

from workspace_memory.bootstrap import Services

pytestmark = pytest.mark.integration


def test_a_read_of_no_keys_is_no_items(svc: Services) -> None:
    assert svc.table.get_many([]) == []
