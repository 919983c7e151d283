"""`make dev`: the embedded local stack. No AWS account, no Docker.

Starts the moto server (DynamoDB + KMS, serialized), creates the table from template.yaml and a KMS key,
and serves the API through the local gateway. Loopback only. Ctrl-C stops everything it started.
Ports: MOTO_PORT (5000), GATEWAY_PORT (3000).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from types import FrameType

from scripts.localstack.gateway import Gateway, make_server
from scripts.localstack.resources import FAKE_CREDENTIALS, provision
from scripts.localstack.template import ROOT

HOST = "127.0.0.1"


def start_moto(port: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scripts.localstack.moto_server", "--host", HOST, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"moto server failed to start on {HOST}:{port} (is the port in use?)")
    return proc, f"http://{HOST}:{line.split()[1]}"


def main() -> None:
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(FAKE_CREDENTIALS)
    moto_port = int(os.environ.get("MOTO_PORT", "5000"))
    gateway_port = int(os.environ.get("GATEWAY_PORT", "3000"))

    moto, endpoint = start_moto(moto_port)
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    server = None
    try:
        resources = provision(endpoint)
        os.environ.update(resources.environment())
        server = make_server(Gateway(), HOST, gateway_port)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"moto (DynamoDB + KMS)  {endpoint}", flush=True)
        print(f"API                    http://{HOST}:{server.server_address[1]}", flush=True)
        print(f"ready: curl -s http://{HOST}:{gateway_port}/v1/health   (Ctrl-C stops everything)", flush=True)
        stop.wait()
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        moto.terminate()
        moto.wait(timeout=10)
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
