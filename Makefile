# Two commands on a fresh machine: `make dev` (the local stack) and `make test` (the suite).
# Each creates .venv on Python 3.13 (the template's Lambda runtime), installs the locked dependencies, and
# builds the artifact `sam build` makes (cached while nothing changed) before running anything from it.
VENV   := .venv
PY     := $(VENV)/bin/python
# Python 3.13 wherever the machine has one (scripts/python313 looks past pyenv shims); else python3, loudly.
BASE_PY := $(shell sh scripts/python313 2>/dev/null)
ifeq ($(BASE_PY),)
BASE_PY := python3
$(warning No Python 3.13 found (the Lambda runtime in template.yaml): using $(shell python3 --version 2>&1). Install 3.13 (pyenv install 3.13) or set PYTHON313=/path/to/python3.13; sam build needs it.)
endif
UV     := $(VENV)/bin/uv
STAMP  := $(VENV)/.synced-$(shell cat uv.lock pyproject.toml | cksum | cut -d' ' -f1)-$(notdir $(BASE_PY))
export UV_PYTHON_DOWNLOADS := never
export SAM_CLI_TELEMETRY := 0

.PHONY: install build layer-requirements dev demo invoke check test soak lint typecheck template-lint unit integration bench mutation clean openapi schemathesis eval

install: $(STAMP)

# A venv of another interpreter (an older checkout's python3.11, say) is made anew on BASE_PY.
$(STAMP): pyproject.toml uv.lock
	test -x $(PY) && [ "$$($(PY) -c 'import sys; print(sys._base_executable)')" = "$$($(BASE_PY) -c 'import sys; print(sys.executable)')" ] \
	  || { rm -rf $(VENV) && $(BASE_PY) -m venv $(VENV); }
	$(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --upgrade >/dev/null
	$(PY) -m pip install --quiet --disable-pip-version-check uv==0.13.9
	$(UV) sync --frozen --inexact --python $(PY)
	rm -f $(VENV)/.synced-* && touch $@

# The artifact: `sam build` without Docker for the template's architecture (.aws-sam/build, what `sam deploy`
# ships) and, on a host of another architecture, the same for this host (.aws-sam/host/build, what the local
# stack loads). Skipped while its inputs are unchanged (scripts/artifact/build.py).
build: install
	$(PY) -m scripts.artifact.build

# The layer's requirements from uv.lock, exact pins with hashes (tests/unit/test_artifact.py fails when stale).
layer-requirements: install
	$(PY) -m scripts.artifact.requirements

# A plain command (no shell metacharacters), so make execs python itself: no shell in between. Python
# tethers itself to make (SIGTERM when make dies, even by SIGKILL) and its children to itself (SIGKILL).
dev: build
	$(PY) -m scripts.localstack

demo: install
	$(PY) -m scripts.demo

# `sam local invoke` without Docker: FUNCTION (a logical id of template.yaml) on EVENT (events/<file>.json) in a
# fresh execution environment from the artifact, against `make dev`'s running stack (MOTO_PORT, TEMPORAL_PORT);
# SUB="OLD=NEW ..." replaces the events' fixed ids, TABLE another table than workspace-memory.
invoke: build
	$(PY) -m scripts.localstack.invoke $(FUNCTION) $(EVENT) $(foreach s,$(SUB),--sub $(s)) $(if $(TABLE),--table $(TABLE))

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

integration: build
	$(PY) -m pytest tests/integration -q

# Test tiers by cost (tests/depth.py: WM_TEST_DEPTH sizes race rounds and generated examples).
# check: lint, types and the fast unit tests, for feedback in under a minute (no stack, no sockets).
check: lint typecheck
	WM_TEST_DEPTH=check $(PY) -m pytest tests/unit -q -m "not slow" -n auto

# test (the README's command, and CI's): everything, races and generated requests sized to fit in 20 minutes.
# One pytest-xdist worker per core, each with a local stack of its own; a file's tests stay on one worker (its
# module fixtures are built once).
test: lint typecheck template-lint build
	$(PY) -m pytest -q -n auto --dist loadfile --durations=25

# soak: the slow tests at full depth (200-round races, 100 schemathesis requests per route, 5x hypothesis
# examples). Run it before changing the fence (docs/decisions: test tiers). A 200-round race takes about four
# minutes on an idle 2-core machine, so a test's limit here is 30 minutes, not the suite's 5.
soak: build
	WM_TEST_DEPTH=soak $(PY) -m pytest -q -m slow -n auto --dist loadfile -o timeout=1800

# The OpenAPI document the docs function serves, generated from the handlers (tests/unit/api/test_openapi.py
# fails while it is stale).
openapi: install
	$(PY) -m scripts.openapi

# Schemathesis alone against a local stack the fixtures start (part of `make test` too, and of `make soak` at
# 100 requests per route).
schemathesis: install
	$(PY) -m pytest tests/integration/api/test_schemathesis.py -q

# The search quality set (tests/quality/) through BM25, embeddings and their fusion: recall@5, MRR, negatives.
# EVAL_ARGS="--floors 0.10,0.20,0.24,0.30" compares cosine floors; LOCOMO=DIR (or EVAL_ARGS="--locomo DIR") adds
# LoCoMo from a folder with the public snap-research/locomo data (never in the repository), beside LangGraph's
# store with the same embedder (the `peers` dependency group, installed here and nowhere else).
eval: install
	$(UV) sync --frozen --inexact --group peers --python $(PY) --quiet
	$(PY) -m scripts.eval_search $(if $(LOCOMO),--locomo $(LOCOMO)) $(EVAL_ARGS)

bench: install
	$(PY) -m scripts.bench

# Mutation testing of the fence-critical code, outside CI (mutmut via `uv run --with`, not in uv.lock):
# docs/mutation.md. MUTATION_ARGS=--curated runs the hand-written guard mutants instead.
mutation: install
	$(PY) -m scripts.mutation $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) .local .aws-sam
