# Two entry points a newcomer needs: `make demo` and `make test`.
# Everything else here is the set-up they share.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# What the demo needs (the package, JupyterLab, pandas) and, on top, what the tests need.
DEMO_STAMP := $(VENV)/.installed-demo
STAMP   := $(VENV)/.installed
# The demo runs on copies of notebooks/ here (git ignores it): running and autosaving
# them leaves the clone clean, and a later `make demo` keeps your changes to them.
PLAYGROUND := playground
# Seconds a question or permission waits in the demo: time to read the card first.
DEMO_ANSWER_TIMEOUT := 300
# Enterprise Gateway for tests/gateway, in its own environment: it pins jupyter_server<2.
GATEWAY_STAMP := .venv-gateway/.installed

.PHONY: demo demo-setup test setup lint typecheck pytest jstest clean bench

# The printed link and the browser open the quickstart (JupyterLab 4: /lab/tree/<path>).
# JupyterLab refuses root without --allow-root (containers often run as root).
demo: demo-setup
	$(BIN)/python scripts/demo_notebooks.py notebooks $(PLAYGROUND)
	cd $(PLAYGROUND) && $(abspath $(BIN))/jupyter lab --LabApp.default_url=/lab/tree/quickstart.ipynb \
		--AcpNotebookApp.answer_timeout=$(DEMO_ANSWER_TIMEOUT) \
		$$([ "$$(id -u)" = 0 ] && echo --allow-root)

test: setup $(GATEWAY_STAMP) lint typecheck jstest pytest

# Every benchmark, one table (docs/performance.md); bench/run.py --quick: smaller sizes.
bench: setup
	$(BIN)/python bench/run.py

AGENT_MODULES := tests/claude/node_modules/.package-lock.json \
	tests/codex/node_modules/.package-lock.json tests/opencode/node_modules/.package-lock.json
# axe-core, which the browser tests' accessibility check loads into pages.
BROWSER_MODULES := tests/browser/node_modules/.package-lock.json

# The demo: Python, JupyterLab and the widget's build (Node for the build only).
demo-setup: js/node_modules/.package-lock.json $(DEMO_STAMP)

# The tests: the real agents' npm packages and Chromium too.
setup: demo-setup $(STAMP) $(AGENT_MODULES) $(BROWSER_MODULES)
	$(BIN)/python scripts/ensure_chromium.py

# After npm ci and the build: the editable install then finds the widget built (its
# `npm install` would not rewrite js/package-lock.json).
$(DEMO_STAMP): pyproject.toml js/package.json js/node_modules/.package-lock.json
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[demo]"
	# An editable install links the JupyterLab extension's build output (js/ builds it).
	$(BIN)/jupyter-builder develop --overwrite .
	touch $@

# The develop link goes first: pip would write the extension's install.json through it into
# acp_notebook/labextension/, and a wheel built from there then has it twice.
$(STAMP): $(DEMO_STAMP)
	rm -f $(VENV)/share/jupyter/labextensions/acp-notebook
	$(BIN)/pip install -q -e ".[test]"
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
	@echo "$(PLAYGROUND)/ (your copies of the notebooks) is left as it is."
