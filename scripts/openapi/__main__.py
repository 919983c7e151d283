"""`python -m scripts.openapi` writes functions/docs/openapi.json; `--check` fails when that file is stale."""

from __future__ import annotations

import argparse
import sys

from scripts import openapi
from scripts.localstack.template import ROOT
from scripts.openapi.generate import DOCUMENT, build_document, render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(openapi.__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed document is stale")
    args = parser.parse_args(argv)
    text = render(build_document())
    if args.check:
        if not DOCUMENT.exists() or DOCUMENT.read_text(encoding="utf-8") != text:
            print(f"{DOCUMENT.relative_to(ROOT)} is stale: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    DOCUMENT.write_text(text, encoding="utf-8")
    print(f"wrote {DOCUMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    from scripts.localstack.resources import isolate_environment

    isolate_environment()  # the handler modules are imported, never run: no AWS is reached either way
    raise SystemExit(main())
