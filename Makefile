# Two entry points a newcomer needs: `make demo` and `make test`.
# Everything else here is the set-up they share.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# Enterprise Gateway for tests/gateway, in its own environment: it pins jupyter_server<2.
GATEWAY_STAMP := .venv-gateway/.installed

.PHONY: demo test setup lint typecheck pytest jstest clean bench

# JupyterLab refuses root without --allow-root (containers often run as root).
demo: setup
	$(BIN)/jupyter lab notebooks/quickstart.ipynb $$([ "$$(id -u)" = 0 ] && echo --allow-root)

test: setup $(GATEWAY_STAMP) lint typecheck jstest pytest

# Every benchmark, one table (README "Performance"); bench/run.py --quick: smaller sizes.
bench: setup
	$(BIN)/python bench/run.py

AGENT_MODULES := tests/claude/node_modules/.package-lock.json \
	tests/codex/node_modules/.package-lock.json tests/opencode/node_modules/.package-lock.json
# axe-core, which the browser tests' accessibility check loads into pages.
BROWSER_MODULES := tests/browser/node_modules/.package-lock.json

setup: $(STAMP) js/node_modules/.package-lock.json $(AGENT_MODULES) $(BROWSER_MODULES)
	$(BIN)/python scripts/ensure_chromium.py

$(STAMP): pyproject.toml js/package.json
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	# An editable install links the JupyterLab extension's build output (js/ builds it).
	$(BIN)/jupyter-builder develop --overwrite .
	touch $@

$(GATEWAY_STAMP): tests/gateway/requirements.txt
	$(PY) -m venv .venv-gateway
	.venv-gateway/bin/pip install -q -r tests/gateway/requirements.txt
	touch $@

js/node_modules/.package-lock.json: js/package-lock.json
	cd js && npm ci --no-audit --no-fund
	cd js && npm run build

# The real agents the issue-6 tests drive and the browser tests' axe-core, each pinned by its own lock.
tests/%/node_modules/.package-lock.json: tests/%/package-lock.json
	cd tests/$* && npm ci --no-audit --no-fund

# contracts.ts is generated from the Python contracts: a stale one fails here.
lint:
	$(BIN)/ruff check acp_notebook tests scripts
	$(BIN)/ruff format --check acp_notebook tests scripts
	$(BIN)/python scripts/gen_contracts.py --check
	cd js && npx biome check .

typecheck:
	$(BIN)/mypy
	cd js && npx tsc --noEmit

jstest:
	cd js && npx vitest run

pytest:
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .venv-gateway js/node_modules js/lib tests/*/node_modules acp_notebook/static acp_notebook/labextension
