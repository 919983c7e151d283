# Two commands on a fresh machine: `make dev` (the local stack) and `make test` (the suite).
# Each creates .venv and installs the locked dependencies first.
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
STAMP  := $(VENV)/.synced-$(shell cat uv.lock pyproject.toml | cksum | cut -d' ' -f1)
export UV_PYTHON_DOWNLOADS := never
export SAM_CLI_TELEMETRY := 0

.PHONY: install dev demo test lint typecheck template-lint unit integration bench mutation clean openapi schemathesis eval

install: $(STAMP)

$(STAMP): pyproject.toml uv.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --upgrade >/dev/null
	$(PY) -m pip install --quiet --disable-pip-version-check uv==0.13.9
	$(UV) sync --frozen --inexact --python $(PY)
	rm -f $(VENV)/.synced-* && touch $@

# A plain command (no shell metacharacters), so make execs python itself: no shell in between. Python
# tethers itself to make (SIGTERM when make dies, even by SIGKILL) and its children to itself (SIGKILL).
dev: install
	$(PY) -m scripts.localstack

demo: install
	$(PY) -m scripts.demo

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: install
	$(PY) -m mypy layers functions workflows scripts tests mcp_server

# cfn-lint from the lock; SAM CLI in an isolated tool environment (its pins would fight the project's boto3).
SAM_CLI := aws-sam-cli==1.170.0

template-lint: install
	$(VENV)/bin/cfn-lint template.yaml
	$(UV) tool run --python $(PY) --from $(SAM_CLI) sam validate --lint

unit: install
	$(PY) -m pytest tests/unit -q

integration: install
	$(PY) -m pytest tests/integration -q

test: lint typecheck template-lint
	$(PY) -m pytest -q

# The OpenAPI document the docs function serves, generated from the handlers (tests/unit/test_openapi.py
# fails while it is stale).
openapi: install
	$(PY) -m scripts.openapi

# Schemathesis alone against a local stack the fixtures start (part of `make test` too).
schemathesis: install
	$(PY) -m pytest tests/integration/test_schemathesis.py -q

# The search quality set (tests/quality/) through BM25, embeddings and their fusion: recall@5, MRR, negatives.
# EVAL_ARGS="--floors 0.10,0.20,0.24,0.30" compares cosine floors.
eval: install
	$(PY) -m scripts.eval_search $(EVAL_ARGS)

bench: install
	$(PY) -m scripts.bench

# Mutation testing of the fence-critical code, outside CI (mutmut via `uv run --with`, not in uv.lock):
# docs/mutation.md. MUTATION_ARGS=--curated runs the hand-written guard mutants instead.
mutation: install
	$(PY) -m scripts.mutation $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) .local .aws-sam
