"""Each integration module starts on an empty table.

The modules share one stack (servers and warm execution environments are the slow part to start), but not
its data: what a module stored is deleted when it ends. Tests assert on whole-table scans ("this marker is
nowhere", "nothing changed"), and a table the whole session filled makes each scan cost the session's
history, so the suite grew quadratically with its own length. Every test still makes its own workspaces and
users; nothing a module reads was stored by another.

The turn worker is shared the same way: one per module that asks for `worker`, running the module's `model`
(the scripted provider unless the module overrides that fixture with its own recording one).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripts.localstack.stack import LocalStack
from tests.integration.turn_support import running_worker, worker_settings
from tests.support import empty_table
from workflows.providers import ModelProvider
from workspace_memory.kernel.settings import Settings


@pytest.fixture(scope="module", autouse=True)
def module_table(local_stack: LocalStack) -> Iterator[None]:
    """Set up before the module's own fixtures, so it is torn down after them: the table emptied last."""
    yield
    if (resources := local_stack.provisioned) is not None:
        empty_table(resources)


@pytest.fixture(scope="module")
def model() -> ModelProvider | None:
    """The worker's model provider: None is the scripted one. A module that reads what the model was shown
    overrides this fixture with its own provider."""
    return None


@pytest.fixture(scope="module")
def worker(settings: Settings, gateway_url: str, model: ModelProvider | None) -> Iterator[Settings]:
    """The production turn worker in a thread, on the module's `model`, for the module's turns: the settings it
    runs with (the automation routes of the local gateway)."""
    wsettings = worker_settings(settings, gateway_url)
    with running_worker(wsettings, model):
        yield wsettings
