"""The memory frame's static files (functions/frame): served by name with their content types and a strict
Content-Security-Policy, nothing outside the static folder, no inline script or style, no CDN; and the
versions' wire fields its blame reads."""

from __future__ import annotations

import re

import pytest

from scripts.localstack.gateway import Gateway
from scripts.localstack.template import ROOT
from workspace_memory.api.models.document import VersionOut
from workspace_memory.document.versions import VersionInfo
from workspace_memory.kernel.terms import AuditKind

pytestmark = pytest.mark.unit

STATIC = ROOT / "functions" / "frame" / "static"


@pytest.fixture(scope="module")
def gateway() -> Gateway:
    return Gateway()


def test_the_page_and_its_files_are_served_with_their_types_and_a_strict_csp(gateway: Gateway) -> None:
    expected = {"/app/": "text/html", "/app/app.js": "text/javascript", "/app/app.css": "text/css"}
    for path, content_type in expected.items():
        answer = gateway.invoke("GET", path, {}, b"")
        assert answer["statusCode"] == 200, path
        headers = {k.lower(): v for k, v in answer["headers"].items()}
        assert headers["content-type"].startswith(content_type), path
        assert headers["x-content-type-options"] == "nosniff"
        csp = headers["content-security-policy"]
        for directive in ("default-src 'none'", "script-src 'self'", "connect-src 'self'"):
            assert directive in csp
        assert "unsafe" not in csp


@pytest.mark.parametrize("name", ["nope.js", "..%2Fapp.py", "app.py", "..", ".hidden.js"])
def test_anything_but_a_static_file_is_not_found(gateway: Gateway, name: str) -> None:
    answer = gateway.invoke("GET", f"/app/{name}", {}, b"")
    assert answer["statusCode"] == 404
    assert '"ASSET_NOT_FOUND"' in answer["body"] or '"ROUTE_NOT_FOUND"' in answer["body"]


def test_no_inline_script_or_style_and_nothing_from_elsewhere() -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []
    assert re.findall(r"\son[a-z]+=|\sstyle=", page) == []
    for text in (p.read_text(encoding="utf-8") for p in STATIC.iterdir()):
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, never fetched: the favicon's
        assert re.findall(r"https?://|//cdn", text) == []


def test_the_favicon_is_linked_and_served_as_svg(gateway: Gateway) -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    assert '<link rel="icon" href="favicon.svg" type="image/svg+xml">' in page
    answer = gateway.invoke("GET", "/app/favicon.svg", {}, b"")
    assert answer["statusCode"] == 200
    assert {k.lower(): v for k, v in answer["headers"].items()}["content-type"] == "image/svg+xml"
    assert "<script" not in answer["body"]


def test_no_module_is_over_400_lines_and_no_stored_text_becomes_html() -> None:
    for module in STATIC.glob("*.js"):
        text = module.read_text(encoding="utf-8")
        assert text.count("\n") <= 400, module.name
        assert re.findall(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", text) == [], module.name


def test_every_module_import_is_a_shipped_file() -> None:
    for module in STATIC.glob("*.js"):
        for imported in re.findall(r'from "\./([^"]+)"', module.read_text(encoding="utf-8")):
            assert (STATIC / imported).is_file(), (module.name, imported)


def test_every_control_has_a_label() -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    labelled = set(re.findall(r'<label for="([^"]+)"', page))
    controls = set(re.findall(r'<(?:input|select|textarea)[^>]*\bid="([^"]+)"', page))
    assert controls - labelled == set()


def test_a_capture_version_names_its_admission_and_turn_on_the_wire() -> None:
    info = VersionInfo(4, "capture", "olivia", "2026-01-01T00:00:00Z", 3, "ab", admission_id="adm_1", turn_id="t1")
    wire = VersionOut.of(info).model_dump(by_alias=True, exclude_none=True)
    assert (wire["admissionId"], wire["turnId"]) == ("adm_1", "t1")
    saved = VersionOut.of(VersionInfo(3, "save", "olivia", "2026-01-01T00:00:00Z", 3, "ab"))
    assert "turnId" not in saved.model_dump(by_alias=True, exclude_none=True)


def test_the_activity_filter_offers_every_audit_kind_and_words_each() -> None:
    """The kind filter and the sentences (activity-words.js) follow `AuditKind`: a new kind fails here."""
    words = (STATIC / "activity-words.js").read_text(encoding="utf-8")
    offered = re.search(r"export const KINDS = \[(.*?)\n\];", words, re.S)
    assert offered is not None
    kinds = re.findall(r'\["([a-z-]+)", "', offered.group(1))
    assert sorted(kinds) == sorted(kind.value for kind in AuditKind)  # each once, none the API does not know
    mapped = re.search(r"const WORDS = \{(.*?)\n\};", words, re.S)
    assert mapped is not None
    keys = set(re.findall(r'^  "?([a-z-]+)"?: \{', mapped.group(1), re.M))
    assert keys == {kind.value for kind in AuditKind}
