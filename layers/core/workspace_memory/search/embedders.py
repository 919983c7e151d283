"""The embedding models search can use (docs/architecture.md#the-search-engine): the one whose weights ship inside a
wheel (WordLlama, the default) and Bedrock Titan on AWS. Each turns texts into unit vectors and names its model, so a
vector made by another model is recomputed rather than compared (docs/decisions/0084)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workspace_memory.search.engine import Matrix

LOCAL_MODEL_ID = "wordllama-l2-supercat-256"
TITAN_MODEL_ID = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS = 256


def _normalised(rows: Any) -> Matrix:
    import numpy as np

    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Matrix = matrix / norms
    return unit


_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def _wordllama() -> Any:
    """WordLlama's 256-dimension model, loaded once per process from inside its wheel: the package looks
    for its tokenizer in `tokenizers/`, which is where `cache_dir` points it, and never downloads."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            from pathlib import Path

            import wordllama

            _MODEL = wordllama.WordLlama.load(
                config="l2_supercat", dim=256, cache_dir=Path(wordllama.__file__).parent, disable_download=True
            )
        return _MODEL


class LocalEmbedder:
    """The embedding model that ships inside a PyPI wheel (wordllama, 16 MB of weights): a static
    token-embedding model, so a query embeds in well under a millisecond on one Lambda vCPU."""

    @property
    def model_id(self) -> str:
        return LOCAL_MODEL_ID

    def embed(self, texts: Sequence[str]) -> Matrix:
        return _normalised(_wordllama().embed(list(texts)))


class TitanEmbedder:
    """Amazon Bedrock Titan Text Embeddings v2 (256 dimensions, normalised by the service), the AWS option:
    one InvokeModel per text, as the model takes one input per call."""

    def __init__(self, client: Any, dimensions: int = TITAN_DIMENSIONS) -> None:
        self._client = client
        self._dimensions = dimensions

    @property
    def model_id(self) -> str:
        return f"{TITAN_MODEL_ID}/{self._dimensions}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        """A Bedrock failure (throttling, an outage) is `Unavailable`, as a store failure is: a write answers
        503 and a recall `unavailable`, never a 500; the message names the error code, never the text."""
        from botocore.exceptions import BotoCoreError, ClientError

        from workspace_memory.kernel.errors import Unavailable

        rows = []
        for text in texts:
            try:
                answer = self._client.invoke_model(
                    modelId=TITAN_MODEL_ID,
                    contentType="application/json",
                    accept="application/json",
                    body=json.dumps({"inputText": text, "dimensions": self._dimensions, "normalize": True}),
                )
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "error")
                raise Unavailable(f"embedding model failed ({code})", transient=True) from exc
            except BotoCoreError as exc:
                raise Unavailable(f"embedding model failed ({type(exc).__name__})", transient=True) from exc
            rows.append(json.loads(answer["body"].read())["embedding"])
        return _normalised(rows)
