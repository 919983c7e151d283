"""The eval's numpy MiniLM agrees with sentence-transformers' own figures for this model (its README's example:
0.6660, 0.1046, 0.1411). Runs where the `peers` group is installed (`make eval` installs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.eval import minilm


@pytest.mark.skipif(not minilm.available(), reason="the peers group (make eval) is not installed")
def test_the_numpy_forward_pass_matches_the_reference_similarities(tmp_path: Path) -> None:
    vectors = minilm.MiniLMEmbedder(tmp_path).embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    similarities = vectors @ vectors.T
    assert similarities[0, 1] == pytest.approx(0.6660, abs=2e-3)
    assert similarities[0, 2] == pytest.approx(0.1046, abs=2e-3)
    assert similarities[1, 2] == pytest.approx(0.1411, abs=2e-3)
