"""Each integration module starts on an empty table.

The modules share one stack (servers and warm execution environments are the slow part to start), but not
its data: what a module stored is deleted when it ends. Tests assert on whole-table scans ("this marker is
nowhere", "nothing changed"), and a table the whole session filled makes each scan cost the session's
history, so the suite grew quadratically with its own length. Every test still makes its own workspaces and
users; nothing a module reads was stored by another.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripts.localstack.stack import LocalStack
from tests.support import empty_table


@pytest.fixture(scope="module", autouse=True)
def module_table(local_stack: LocalStack) -> Iterator[None]:
    """Set up before the module's own fixtures, so it is torn down after them: the table emptied last."""
    yield
    if (resources := local_stack.provisioned) is not None:
        empty_table(resources)
