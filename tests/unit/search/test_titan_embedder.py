"""Bedrock Titan Text Embeddings v2 behind the `Embedder` port, on a real `bedrock-runtime` client whose calls
botocore's Stubber answers: the request the model takes, the answer it gives, and `EMBEDDER=bedrock`."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from workspace_memory.bootstrap import build_embedder
from workspace_memory.kernel.errors import Unavailable
from workspace_memory.kernel.settings import Settings
from workspace_memory.search.embedders import TITAN_MODEL_ID, LocalEmbedder, TitanEmbedder

pytestmark = pytest.mark.unit


def client() -> Any:
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    return session.client("bedrock-runtime")


def answer(embedding: list[float]) -> dict[str, Any]:
    payload = json.dumps({"embedding": embedding, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}


def test_titan_gets_one_request_per_text_and_its_answers_become_unit_rows() -> None:
    bedrock = client()
    bodies: list[dict[str, Any]] = []
    seen = "provide-client-params.bedrock-runtime.InvokeModel"
    bedrock.meta.events.register(seen, lambda params, **_: bodies.append(json.loads(params["body"])))
    expected = {"modelId": TITAN_MODEL_ID, "contentType": "application/json", "accept": "application/json", "body": ANY}
    with Stubber(bedrock) as stub:
        stub.add_response("invoke_model", answer([3.0, 4.0] + [0.0] * 254), expected)
        stub.add_response("invoke_model", answer([0.0, 0.0, 2.0] + [0.0] * 253), expected)
        rows = TitanEmbedder(bedrock).embed(["deploy on Tuesdays", "billing in euros"])
        stub.assert_no_pending_responses()
    assert bodies == [
        {"inputText": "deploy on Tuesdays", "dimensions": 256, "normalize": True},
        {"inputText": "billing in euros", "dimensions": 256, "normalize": True},
    ]
    assert rows.shape == (2, 256)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert rows[0][:2].tolist() == pytest.approx([0.6, 0.8])
    assert rows[1][2] == pytest.approx(1.0)
    assert TitanEmbedder(bedrock).model_id == f"{TITAN_MODEL_ID}/256"


def test_a_titan_error_is_unavailable_and_never_names_the_text() -> None:
    bedrock = client()
    with Stubber(bedrock) as stub:
        stub.add_client_error("invoke_model", "ThrottlingException", http_status_code=429)
        with pytest.raises(Unavailable) as raised:
            TitanEmbedder(bedrock).embed(["a secret deploy plan"])
    assert raised.value.message == "embedding model failed (ThrottlingException)"
    assert raised.value.details == {"transient": True}
    assert isinstance(raised.value.__cause__, bedrock.exceptions.ThrottlingException)


def test_embedder_setting_chooses_the_model() -> None:
    base = {"table_name": "t-table", "kms_key_id": "k"}
    bedrock = build_embedder(Settings(**base, embedder="bedrock"))
    assert isinstance(bedrock, TitanEmbedder)
    assert bedrock.model_id == f"{TITAN_MODEL_ID}/256"
    assert isinstance(build_embedder(Settings(**base)), LocalEmbedder)
    assert Settings.from_environ({"TABLE_NAME": "t-table", "KMS_KEY_ID": "k", "EMBEDDER": "bedrock"}).embedder == (
        "bedrock"
    )
