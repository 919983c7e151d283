"""The headers every page this API serves to a browser carries (the frame under /app/, Swagger UI at /v1/docs):
a Content-Security-Policy that names exactly what the page may run, no MIME sniffing, no framing by another
site, no referrer. One definition, so the two pages cannot drift apart."""

from __future__ import annotations

import base64
import hashlib
import re

BASE_POLICY = "default-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def page_headers(policy: str) -> dict[str, str]:
    """The security headers of a page whose Content-Security-Policy is `policy`."""
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }


def _hashes(page: str, tag: str) -> str:
    blocks = re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", page, flags=re.DOTALL)
    digests = (base64.b64encode(hashlib.sha256(block.encode()).digest()).decode() for block in blocks)
    return " ".join(f"'sha256-{digest}'" for digest in dict.fromkeys(digests))


def inline_page_policy(page: str) -> str:
    """A policy for a page whose scripts and stylesheets are all inline: each block allowed by its hash, so a
    script injected into the page (which no hash names) does not run."""
    return (
        f"{BASE_POLICY}; script-src {_hashes(page, 'script')}; style-src {_hashes(page, 'style')}; img-src 'self' data:"
    )
