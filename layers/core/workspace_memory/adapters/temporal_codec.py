"""KMS-backed Temporal payload codec: the Temporal server (and its history store) holds only ciphertext.

Every payload the SDK sends - workflow and activity arguments and results, signals, queries, updates,
memos, and (with the failure converter chosen in `data_converter`) failure messages and stack traces - is
serialized whole (metadata included, so not even the encoding or the pydantic type leaks), encrypted with
the service's `Cipher` (in production `KmsCipher`: aws-encryption-sdk, one KMS key, a key-committing suite,
encryption context verified on decrypt), and replaced by a payload that says only "encrypted by us".

Encryption context. It is the constant `PAYLOAD_CONTEXT`, not bound to a workflow: a codec only sees
payloads (the UI/CLI codec-server protocol does not even send the workflow id), so a per-workflow context
could not be checked on decode. That is acceptable because:

- confidentiality comes from the KMS key: only principals allowed `kms:Decrypt` on it can read a payload,
  and the Temporal server is not one of them;
- integrity comes from the committing AES-GCM suite: a payload cannot be altered, or crafted to decrypt
  differently under another data key, without failing authentication;
- the context still separates *purposes*: `kind=temporal-payload` differs from every memory/notes
  context (`workspace`, object kind, version), so a stored memory ciphertext cannot be replayed into a
  workflow as a payload, nor a payload ciphertext into the table, and `codec=v1` versions the format;
- the `encryption-codec` metadata marker makes decode exact: only our payloads are decrypted, anything
  else (e.g. search attributes or memos written by tools) passes through untouched.

What remains possible is moving one of *our* ciphertexts between workflows of the same namespace, which
needs write access to Temporal history - an attacker with that already controls workflow inputs.

Search attributes are never encoded (the server must index them), so they must never hold memory text.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes, PayloadCodec

from workspace_memory.adapters.kms_cipher import PAYLOAD_DATA_KEY_SECONDS as PAYLOAD_DATA_KEY_SECONDS
from workspace_memory.adapters.kms_cipher import payload_cipher as payload_cipher
from workspace_memory.store.ports import Cipher

ENCODING = b"binary/encrypted"
CODEC_KEY = "encryption-codec"
CODEC_NAME = b"workspace-memory/kms-v1"
PAYLOAD_CONTEXT: dict[str, str] = {"kind": "temporal-payload", "codec": "v1"}


class PayloadDecodeError(Exception):
    """A payload carrying our marker decrypted to something that is not a serialized Payload."""


def is_encrypted(payload: Payload) -> bool:
    """True when `payload` was produced by `KmsPayloadCodec.encode`."""
    return payload.metadata.get(CODEC_KEY) == CODEC_NAME


class KmsPayloadCodec(PayloadCodec):
    """Encrypts each payload whole under `PAYLOAD_CONTEXT`; decodes only payloads it marked.

    The cipher is synchronous (boto3), so each batch runs in a worker thread and the event loop - the
    Temporal worker's or client's - is never blocked on KMS.
    """

    def __init__(self, cipher: Cipher) -> None:
        self._cipher = cipher

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if not payloads:
            return []
        return await asyncio.to_thread(self._encode_all, list(payloads))

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if not any(is_encrypted(p) for p in payloads):
            return list(payloads)
        return await asyncio.to_thread(self._decode_all, list(payloads))

    def _encode_all(self, payloads: list[Payload]) -> list[Payload]:
        return [
            Payload(
                metadata={"encoding": ENCODING, CODEC_KEY: CODEC_NAME},
                data=self._cipher.encrypt(p.SerializeToString(), PAYLOAD_CONTEXT),
            )
            for p in payloads
        ]

    def _decode_all(self, payloads: list[Payload]) -> list[Payload]:
        return [self._decode_one(p) if is_encrypted(p) else p for p in payloads]

    def _decode_one(self, payload: Payload) -> Payload:
        plaintext = self._cipher.decrypt(payload.data, PAYLOAD_CONTEXT)
        try:
            return Payload.FromString(plaintext)
        except DecodeError as exc:  # only reachable with a cipher that does not authenticate
            raise PayloadDecodeError("decrypted payload is not a serialized Payload") from exc


def data_converter(cipher: Cipher) -> DataConverter:
    """The pydantic data converter with `KmsPayloadCodec`; use it for every client and worker.

    Failures use `DefaultFailureConverterWithEncodedAttributes`, which moves messages and stack traces into
    an encoded payload, so they go through the codec too instead of reaching history in clear.
    """
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=KmsPayloadCodec(cipher),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
