"""KMS payload codec and codec-server logic against an in-memory cipher (no sockets, no KMS)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure

from workflows.codec_server import CodecHTTPServer, Response, handle_request, is_loopback
from workspace_memory.adapters.temporal_codec import (
    CODEC_KEY,
    CODEC_NAME,
    ENCODING,
    PAYLOAD_CONTEXT,
    KmsPayloadCodec,
    data_converter,
    is_encrypted,
)
from workspace_memory.store.ports import Cipher

pytestmark = pytest.mark.unit

MARKER = b"PLAINTEXT-MARKER-7f3a"
UI = "http://localhost:8233"


class FakeCipher:
    """XOR "encryption" with an HMAC tag over context and body, so tampering and context swaps fail."""

    def __init__(self) -> None:
        self.encrypt_contexts: list[dict[str, str]] = []
        self.decrypt_contexts: list[dict[str, str]] = []

    @staticmethod
    def _tag(context: Mapping[str, str], body: bytes) -> bytes:
        return hmac.new(b"k", json.dumps(sorted(context.items())).encode() + body, hashlib.sha256).digest()

    @staticmethod
    def _xor(data: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in data)

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        self.encrypt_contexts.append(dict(context))
        body = self._xor(plaintext)
        return self._tag(context, body) + body

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        self.decrypt_contexts.append(dict(context))
        tag, body = ciphertext[:32], ciphertext[32:]
        if not hmac.compare_digest(tag, self._tag(context, body)):
            raise ValueError("authentication failed")
        return self._xor(body)


def _as_cipher(c: FakeCipher) -> Cipher:
    return c  # mypy checks FakeCipher against the protocol here


def _payload(data: bytes, encoding: bytes = b"json/plain", **extra: bytes) -> Payload:
    return Payload(metadata={"encoding": encoding, **extra}, data=data)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _encode(codec: KmsPayloadCodec, payloads: Sequence[Payload]) -> list[Payload]:
    out: list[Payload] = _run(codec.encode(payloads))
    return out


def _decode(codec: KmsPayloadCodec, payloads: Sequence[Payload]) -> list[Payload]:
    out: list[Payload] = _run(codec.decode(payloads))
    return out


@pytest.fixture
def cipher() -> FakeCipher:
    return FakeCipher()


@pytest.fixture
def codec(cipher: FakeCipher) -> KmsPayloadCodec:
    return KmsPayloadCodec(_as_cipher(cipher))


def test_round_trip_of_several_payloads(codec: KmsPayloadCodec, cipher: FakeCipher) -> None:
    payloads = [
        _payload(b'"' + MARKER + b'"', messageType=b"my.Model"),
        _payload(b"", encoding=b"binary/null"),
        _payload(bytes(range(256)) * 40, encoding=b"binary/plain"),
    ]
    encoded = _encode(codec, payloads)
    assert len(encoded) == 3
    for p in encoded:
        assert is_encrypted(p)
        assert dict(p.metadata) == {"encoding": ENCODING, CODEC_KEY: CODEC_NAME}
    assert _decode(codec, encoded) == payloads
    assert cipher.encrypt_contexts == [PAYLOAD_CONTEXT] * 3
    assert cipher.decrypt_contexts == [PAYLOAD_CONTEXT] * 3


def test_encoded_payload_hides_data_and_metadata(codec: KmsPayloadCodec) -> None:
    [encoded] = _encode(codec, [_payload(MARKER, encoding=b"json/" + MARKER)])
    wire = encoded.SerializeToString()
    assert MARKER not in wire
    assert b"json/" not in wire


def test_encode_does_not_mutate_input(codec: KmsPayloadCodec) -> None:
    original = _payload(MARKER)
    copy = Payload()
    copy.CopyFrom(original)
    _encode(codec, [original])
    assert original == copy


def test_empty_batches(codec: KmsPayloadCodec, cipher: FakeCipher) -> None:
    assert _encode(codec, []) == []
    assert _decode(codec, []) == []
    assert cipher.encrypt_contexts == cipher.decrypt_contexts == []


def test_unmarked_payloads_pass_through_decode(codec: KmsPayloadCodec, cipher: FakeCipher) -> None:
    plain = _payload(b'"tool-set memo"')
    lookalike = _payload(b"opaque", encoding=ENCODING, **{CODEC_KEY: b"someone-else/v9"})
    assert _decode(codec, [plain, lookalike]) == [plain, lookalike]
    assert cipher.decrypt_contexts == []


def test_mixed_batch_keeps_order(codec: KmsPayloadCodec) -> None:
    plain = _payload(b"1")
    [secret] = _encode(codec, [_payload(MARKER)])
    assert _decode(codec, [plain, secret, plain]) == [plain, _payload(MARKER), plain]


def test_corrupted_ciphertext_raises(codec: KmsPayloadCodec) -> None:
    [encoded] = _encode(codec, [_payload(MARKER)])
    tampered = bytearray(encoded.data)
    tampered[-1] ^= 0x01
    encoded.data = bytes(tampered)
    with pytest.raises(ValueError, match="authentication"):
        _decode(codec, [encoded])


def test_ciphertext_under_another_context_is_rejected(codec: KmsPayloadCodec, cipher: FakeCipher) -> None:
    memory_ciphertext = cipher.encrypt(b"memory text", {"workspace": "w1", "kind": "memory", "version": "3"})
    forged = Payload(metadata={"encoding": ENCODING, CODEC_KEY: CODEC_NAME}, data=memory_ciphertext)
    with pytest.raises(ValueError, match="authentication"):
        _decode(codec, [forged])


class Note(BaseModel):
    title: str
    lines: list[str]


def test_data_converter_round_trips_pydantic_and_failures(cipher: FakeCipher) -> None:
    converter = data_converter(_as_cipher(cipher))
    assert isinstance(converter.payload_codec, KmsPayloadCodec)
    note = Note(title="t", lines=[MARKER.decode(), "second"])
    payloads = _run(converter.encode([note]))
    assert all(MARKER not in p.SerializeToString() for p in payloads)
    assert _run(converter.decode(payloads, [Note])) == [note]

    failure = Failure()
    _run(converter.encode_failure(RuntimeError(f"boom {MARKER.decode()}"), failure))
    assert MARKER not in failure.SerializeToString()
    error = _run(converter.decode_failure(failure))
    assert MARKER.decode() in str(error)


# --- codec server ------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _request(
    codec: KmsPayloadCodec,
    path: str,
    body: Any,
    *,
    method: str = "POST",
    origin: str | None = UI,
    host: str | None = "127.0.0.1:8888",
) -> Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return handle_request(codec, method, path, raw, origin=origin, host=host)


def _json(response: Response) -> Any:
    assert response.headers.get("Content-Type") == "application/json"
    return json.loads(response.body)


def test_server_encode_then_decode(codec: KmsPayloadCodec) -> None:
    plain = {"metadata": {"encoding": _b64(b"json/plain")}, "data": _b64(b'"' + MARKER + b'"')}
    encoded = _request(codec, "/encode", {"payloads": [plain, plain]})
    assert encoded.status == 200
    assert encoded.headers["Access-Control-Allow-Origin"] == UI
    body = _json(encoded)
    assert len(body["payloads"]) == 2
    assert MARKER not in encoded.body
    assert body["payloads"][0]["metadata"][CODEC_KEY] == _b64(CODEC_NAME)

    decoded = _request(codec, "/default/decode", body)
    assert decoded.status == 200
    assert _json(decoded) == {"payloads": [plain, plain]}


def test_server_decode_passes_unmarked_and_empty(codec: KmsPayloadCodec) -> None:
    plain = {"metadata": {"encoding": _b64(b"json/plain")}, "data": _b64(b"1")}
    assert _json(_request(codec, "/decode", {"payloads": [plain]})) == {"payloads": [plain]}
    assert _json(_request(codec, "/decode", {"payloads": []})) == {"payloads": []}
    assert _json(_request(codec, "/decode", {})) == {"payloads": []}


def test_server_preflight(codec: KmsPayloadCodec) -> None:
    response = _request(codec, "/decode", b"", method="OPTIONS")
    assert response.status == 204
    assert response.headers["Access-Control-Allow-Origin"] == UI
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert "X-Namespace" in response.headers["Access-Control-Allow-Headers"]


def test_server_without_origin_has_no_cors_headers(codec: KmsPayloadCodec) -> None:
    response = _request(codec, "/decode", {"payloads": []}, origin=None)  # the CLI sends no Origin
    assert response.status == 200
    assert not any(h.startswith("Access-Control") for h in response.headers)


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"origin": "https://evil.example"}, 403),
        ({"host": "evil.example:8888"}, 421),
        ({"host": "localhost.evil.example:8888"}, 421),
        ({"host": "[::1].evil.example"}, 421),
        ({"host": None}, 421),
        ({"method": "GET"}, 405),
        ({"method": "PUT"}, 405),
    ],
)
def test_server_refusals(codec: KmsPayloadCodec, cipher: FakeCipher, kwargs: dict[str, Any], status: int) -> None:
    [secret] = _encode(codec, [_payload(MARKER)])
    response = _request(codec, "/decode", {"payloads": [MessageToDict(secret)]}, **kwargs)
    assert response.status == status
    assert MARKER not in response.body
    assert cipher.decrypt_contexts == []


def test_server_unknown_path(codec: KmsPayloadCodec) -> None:
    assert _request(codec, "/decrypt", {"payloads": []}).status == 404
    assert _request(codec, "/", {"payloads": []}).status == 404


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", json.dumps({"payloads": "x"}).encode(), json.dumps({"bogus": []}).encode()],
)
def test_server_malformed_body(codec: KmsPayloadCodec, body: bytes) -> None:
    response = _request(codec, "/decode", body)
    assert response.status == 400
    assert "message" in _json(response)
    assert response.headers["Access-Control-Allow-Origin"] == UI


def test_server_rejected_ciphertext_is_500_without_details(codec: KmsPayloadCodec) -> None:
    [secret] = _encode(codec, [_payload(MARKER)])
    secret.data = secret.data[:-1] + bytes([secret.data[-1] ^ 1])
    response = _request(codec, "/decode", {"payloads": [MessageToDict(secret)]})
    assert response.status == 500
    assert _json(response) == {"message": "decode failed (ValueError)"}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.1.2.3", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_server_refuses_non_loopback_bind(codec: KmsPayloadCodec, host: str) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        CodecHTTPServer(codec, host, 0)


def test_server_refusing_a_host_says_so_in_the_shared_error_shape(codec: KmsPayloadCodec) -> None:
    response = _request(codec, "/decode", {"payloads": []}, host="attacker.com:8888")
    assert (response.status, _json(response)["error"]["code"]) == (421, "HOST_NOT_ALLOWED")
    assert not any(h.startswith("Access-Control") for h in response.headers)


@pytest.mark.parametrize("origin", ["*", "null", "https://evil.example", "http://localhost:8233/"])
def test_server_allows_loopback_ui_origins_only(codec: KmsPayloadCodec, origin: str) -> None:
    with pytest.raises(ValueError, match="loopback UI origins only"):
        CodecHTTPServer(codec, "127.0.0.1", 0, [UI, origin])
