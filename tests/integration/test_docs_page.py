"""Swagger UI at /v1/docs renders in a real browser under its Content-Security-Policy: the inline script and
stylesheet run (allowed by hash), the browser reports no violation, and a script added to the page (as an
injection would add one) is refused."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.integration.test_frame import browser, page, playwright  # noqa: F401  (the frame's browser fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_swagger_ui_renders_under_its_csp_and_refuses_an_added_script(
    page: Page,  # noqa: F811
    gateway_url: str,
) -> None:
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    response = page.goto(f"{gateway_url}/v1/docs")
    assert response is not None
    assert response.status == 200
    assert "frame-ancestors 'none'" in (response.headers.get("content-security-policy") or "")
    expect(page.locator(".opblock").first).to_be_visible()  # the operations, drawn by the inline bundle
    assert not [m for m in messages if "Content Security Policy" in m], messages
    page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__injected = true'; document.body.appendChild(s); }"""
    )
    assert page.evaluate("() => window.__injected === true") is False
    assert [m for m in messages if "Content Security Policy" in m]
