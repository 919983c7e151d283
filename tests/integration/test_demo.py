"""`make demo` (`python -m scripts.demo`) as a developer runs it with no stack up: it starts the local stack (in
the demo's process) on the ports it is given, plays the whole scenario over HTTP, stops the stack and exits 0."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from scripts.localstack.temporal import free_ports
from tests.support import dev_stack_environment, refuses, spawn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DEMO_TIMEOUT_SECONDS = 240.0
STOP_TIMEOUT_SECONDS = 60.0


@pytest.mark.timeout(DEMO_TIMEOUT_SECONDS + STOP_TIMEOUT_SECONDS + 30)
def test_demo_starts_the_stack_plays_the_scenario_and_stops_it(tmp_path: Path) -> None:
    moto_port, gateway_port, temporal_port = free_ports(3)
    env = dev_stack_environment(tmp_path / "state", moto_port, gateway_port, temporal_port, None)
    proc = spawn("scripts.demo", env, subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=DEMO_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # the demo stops the stack it started before exiting
        out, err = proc.communicate(timeout=STOP_TIMEOUT_SECONDS)
        pytest.fail(f"the demo did not finish within {DEMO_TIMEOUT_SECONDS:.0f}s\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    transcript = f"{out}\n--- stderr ---\n{err}"

    assert proc.returncode == 0, transcript
    assert "starting the local stack" in out, transcript
    assert f"API http://127.0.0.1:{gateway_port}" in out, transcript
    # Step 3: the remembered line is in the document, committed as version 2.
    step3 = out.split("== 3.", 1)[1].split("== 4.", 1)[0]
    assert "remember_in_memory → committed version=2" in step3, transcript
    assert (
        "document v2:\n    | # Team memory\n    | - We deploy on Tuesdays\n    | - Feature flags gate risky changes"
        in step3
    )
    # Step 4: the second turn of the session answers from the note the first one wrote.
    step4 = out.split("== 4.", 1)[1].split("== 5.", 1)[0]
    second_answer = step4.split("the next turn of the same session", 1)[1]
    assert "    | ask Bob about the release train" in second_answer, transcript
    # Step 5: Alice opens a key session (all scopes); the runtime admits under it and recalls version 2.
    step5 = out.split("== 5.", 1)[1].split("== 6.", 1)[0]
    assert '"scopes": ["memory:read", "memory:write", "notes"]' in step5, transcript
    admission_request = next(line for line in step5.splitlines() if "/admissions" in line)
    assert '"keySessionId": "ks_' in admission_request, transcript
    assert '← 200 {"status": "ok", "revision": 2, "memoryWrite": "commit"}' in step5, transcript
    # Step 6: the capture admitted before the Clear is refused by the policy predicate; nothing written.
    step6 = out.split("== 6.", 1)[1].split("== 7.", 1)[0]
    assert '{"outcome": "refused", "predicate": "policy"}' in step6, transcript
    assert "document v3:" in step6, transcript
    # Step 7: read_only makes a proposal; a pre-Clear stamp is refused, the current one applies.
    step7 = out.split("== 7.", 1)[1].split("== 8.", 1)[0]
    assert "remember_in_memory → proposal" in step7, transcript
    assert "PROPOSAL_CLEARED" in step7, transcript
    assert "document v4:\n    | - Releases ship behind a flag" in step7, transcript
    # Step 8: Alice, the conversation's owner, reads its receipts.
    step8 = out.split("== 8.", 1)[1].split("== 9.", 1)[0]
    assert "save_memory → committed" in step8, transcript
    assert '"revision": 1, "summary": "We deploy on Tuesdays"' in step8, transcript
    assert "X-Base-Revision" in step8, transcript
    assert "?asOf=" in step8, transcript
    assert "QUOTE_REQUIRED" in step8, transcript
    assert "    | - Answers short — Keep answers short [" in step8, transcript

    step9 = out.split("== 9.", 1)[1]
    assert "receipts, one per model call (never text):" in step9, transcript
    assert "demo: every step answered as expected" in out, transcript
    assert "local stack stopped" in out, transcript
    assert "FAILED" not in err, transcript
    for port in (moto_port, gateway_port, temporal_port):  # the stack went with the demo
        assert refuses(port), f"port {port} still accepts connections after the demo"
