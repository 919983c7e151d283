"""The KMS payload codec with the real cipher (KMS on the moto server), the codec server over loopback, and
the real Temporal dev server: what Temporal stores is ciphertext, and the codec server lets the CLI read it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import requests
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client

from scripts.localstack.resources import LocalResources
from scripts.localstack.temporal import temporal_binary
from tests.support import serving_codec
from workspace_memory.adapters.temporal_codec import (
    CODEC_KEY,
    CODEC_NAME,
    ENCODING,
    PAYLOAD_CONTEXT,
    KmsPayloadCodec,
    data_converter,
    is_encrypted,
    payload_cipher,
)
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.workspaces.access import ShareType

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


class MemoryNote(BaseModel):
    workspace: str
    text: str
    tags: list[str]


def _marker() -> str:
    return f"CODEC-MARKER-{uuid.uuid4().hex}"


def test_round_trip_through_data_converter(svc: Services) -> None:
    marker = _marker()
    converter = data_converter(svc.cipher)
    note = MemoryNote(workspace="ws-1", text=f"remember {marker}", tags=[marker, "x"])

    async def scenario() -> tuple[list[Payload], list[object]]:
        payloads = await converter.encode([note, marker])
        return payloads, await converter.decode(payloads, [MemoryNote, str])

    payloads, values = asyncio.run(scenario())
    assert len(payloads) == 2
    for p in payloads:
        assert is_encrypted(p)
        assert p.metadata["encoding"] == ENCODING
        wire = p.SerializeToString()
        assert marker.encode() not in wire
        assert b"MemoryNote" not in wire
        assert b"json/plain" not in wire
    assert values == [note, marker]


def test_payload_and_memory_ciphertexts_do_not_cross(svc: Services) -> None:
    """`kind=temporal-payload` separates payload ciphertexts from memory ciphertexts, both ways."""
    codec = data_converter(svc.cipher).payload_codec
    assert codec is not None
    [encoded] = asyncio.run(codec.encode([Payload(metadata={"encoding": b"json/plain"}, data=b'"x"')]))
    with pytest.raises(DecryptionFailed):
        svc.cipher.decrypt(encoded.data, {"workspace": "w", "kind": "temporal-payload", "version": "1"})
    assert svc.cipher.decrypt(encoded.data, PAYLOAD_CONTEXT)  # the real context does open it

    ws = svc.access.create_workspace("codec-owner", "codec", ShareType.SHARED)  # memory is under ws's branch key
    memory = svc.cipher.encrypt(b"memory text", {"workspace": ws, "kind": "memory", "version": "1"})
    forged = Payload(metadata={"encoding": ENCODING, CODEC_KEY: CODEC_NAME}, data=memory)
    with pytest.raises(DecryptionFailed):
        asyncio.run(codec.decode([forged]))


def test_failure_messages_are_encrypted(svc: Services) -> None:
    marker = _marker()
    converter = data_converter(svc.cipher)
    failure = Failure()
    asyncio.run(converter.encode_failure(ValueError(f"bad {marker}"), failure))
    assert marker.encode() not in failure.SerializeToString()
    assert marker in str(asyncio.run(converter.decode_failure(failure)))


@pytest.fixture
def codec_server(svc: Services) -> Iterator[str]:
    with serving_codec(svc.cipher) as url:
        yield url


def test_codec_server_over_loopback(svc: Services, codec_server: str) -> None:
    marker = _marker()
    payloads = asyncio.run(data_converter(svc.cipher).encode([MemoryNote(workspace="w", text=marker, tags=[])]))
    body = {"payloads": [MessageToDict(p) for p in payloads]}
    ui = "http://localhost:8233"

    preflight = requests.options(f"{codec_server}/decode", headers={"Origin": ui}, timeout=10)
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == ui

    decoded = requests.post(f"{codec_server}/decode", json=body, headers={"Origin": ui}, timeout=30)
    assert decoded.status_code == 200, decoded.text
    [plain] = decoded.json()["payloads"]
    assert base64.b64decode(plain["metadata"]["encoding"]) == b"json/plain"
    assert marker.encode() in base64.b64decode(plain["data"])

    reencoded = requests.post(f"{codec_server}/encode", json=decoded.json(), timeout=30)
    assert reencoded.status_code == 200
    assert marker not in reencoded.text

    foreign = requests.post(f"{codec_server}/decode", json=body, headers={"Origin": "https://evil.example"}, timeout=10)
    assert foreign.status_code == 403
    assert marker not in foreign.text


def test_codec_server_entry_point(svc: Services, resources: LocalResources) -> None:
    """`python -m workflows.codec_server` builds its cipher from the service's environment."""
    marker = _marker()
    payloads = asyncio.run(data_converter(svc.cipher).encode([marker]))
    env = {**os.environ, **resources.environment()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "workflows.codec_server", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert lines[1].startswith("READY "), lines
        url = f"http://127.0.0.1:{int(lines[1].split()[1])}"
        response = requests.post(f"{url}/decode", json={"payloads": [MessageToDict(p) for p in payloads]}, timeout=30)
        assert response.status_code == 200, response.text
        [plain] = response.json()["payloads"]
        assert base64.b64decode(plain["data"]) == json.dumps(marker).encode()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    refused = subprocess.run(
        [sys.executable, "-m", "workflows.codec_server", "--host", "0.0.0.0", "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "loopback only" in refused.stderr


# --- the real Temporal dev server --------------------------------------------------------------------


def _payload_data(node: Any) -> Iterator[bytes]:
    """Every payload's data in a protobuf-JSON history (a payload: a dict with "metadata" and "data")."""
    if isinstance(node, dict):
        if "metadata" in node and isinstance(node.get("data"), str):
            yield base64.b64decode(node["data"])
        for value in node.values():
            yield from _payload_data(value)
    elif isinstance(node, list):
        for value in node:
            yield from _payload_data(value)


def test_temporal_history_holds_only_ciphertext(svc: Services, temporal_address: str, codec_server: str) -> None:
    marker = _marker()
    workflow_id = f"codec-probe-{uuid.uuid4().hex[:8]}"
    note = MemoryNote(workspace="ws", text=marker, tags=[marker])

    async def scenario() -> tuple[bytes, list[Any], Mapping[str, Any]]:
        client = await Client.connect(temporal_address, data_converter=data_converter(svc.cipher))
        # No worker needed: starting the workflow records its input and memo in history.
        handle = await client.start_workflow(
            "CodecProbe", note, id=workflow_id, task_queue=f"codec-probe-{uuid.uuid4().hex}", memo={"note": marker}
        )
        raw = await Client.connect(temporal_address)  # no codec: sees what the server stores
        history = await raw.get_workflow_handle(workflow_id).fetch_history()
        stored = b"".join(event.SerializeToString() for event in history.events)
        started = history.events[0].workflow_execution_started_event_attributes
        args = await client.data_converter.decode(started.input.payloads, [MemoryNote])
        memo = await (await handle.describe()).memo()
        await handle.terminate()
        return stored, args, memo

    stored, args, memo = asyncio.run(scenario())
    assert marker.encode() not in stored
    assert CODEC_NAME in stored
    assert args == [note]
    assert memo == {"note": marker}

    base = [temporal_binary(), "--disable-config-file", "--disable-config-env", "--address", temporal_address]
    show = [*base, "workflow", "show", "--workflow-id", workflow_id, "--output", "json"]
    without = subprocess.run(show, capture_output=True, text=True, timeout=60, check=True)
    assert marker not in without.stdout
    with_codec = subprocess.run(
        [*show, "--codec-endpoint", codec_server], capture_output=True, text=True, timeout=60, check=True
    )
    decoded = b"\n".join(_payload_data(json.loads(with_codec.stdout)))
    assert decoded.count(marker.encode()) >= 3  # input (text and tag) and memo, decoded by the codec server


def test_payload_cipher_reuses_a_data_key_within_its_window(svc: Services) -> None:
    """Several payloads, one GenerateDataKey; a fresh codec's decrypts hit its data-key cache after one Decrypt."""
    import boto3

    kms = boto3.client("kms", endpoint_url=svc.settings.endpoint_url, region_name=svc.settings.region)
    calls: list[str] = []
    kms.meta.events.register("before-call.kms.*", lambda model, **_: calls.append(model.name))
    cipher = payload_cipher(kms, svc.settings.kms_key_id)
    codec = KmsPayloadCodec(cipher)
    payloads = [Payload(metadata={"encoding": b"json/plain"}, data=f'"payload {i}"'.encode()) for i in range(5)]
    encoded = asyncio.run(codec.encode(payloads))
    assert calls == ["GenerateDataKey"]
    fresh = KmsPayloadCodec(payload_cipher(kms, svc.settings.kms_key_id))
    assert asyncio.run(fresh.decode(encoded)) == payloads
    assert calls == ["GenerateDataKey", "Decrypt"]  # one KMS Decrypt for the five payloads' shared data key
