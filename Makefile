# The README's two commands are `make serve` and `make test`; both set up what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
OFFLINE_ZIP := build/what-ai-workloads-need-offline.zip
export NO_MKDOCS_2_WARNING := 1

.PHONY: setup build serve dev test lint test-engine test-site bench chromium clean pyodide-check

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements/site.txt requirements/test.txt requirements/constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/test.txt -c requirements/constraints.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The site in site/, plus a copy that opens from disk, zipped into site/download/.
build: setup
	rm -rf build/offline && mkdir -p build
	OFFLINE=true $(PY) -m mkdocs build --strict --site-dir build/offline
	rm -f $(OFFLINE_ZIP) && $(PY) tools/offline_zip.py build/offline $(OFFLINE_ZIP)
	$(PY) -m mkdocs build --strict
	mkdir -p site/download && cp $(OFFLINE_ZIP) site/download/

# Built for the address it is served at, so its canonical links and sitemap name it.
serve: export SITE_URL ?= http://$(HOST):$(PORT)/
serve: build
	$(PY) tools/serve.py --host $(HOST) --port $(PORT) site

# For authors: rebuild on save (live widgets need the runtime copied by the build hook).
dev: setup
	SITE_URL=http://$(HOST):$(PORT)/ $(PY) -m mkdocs serve --dev-addr $(HOST):$(PORT)

chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's chromium for the browser tests..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "The browser tests need Debian's Chromium at /usr/bin/chromium."; \
	  echo "Install it with:  sudo apt-get install chromium   then run make test again."; \
	  exit 1; \
	fi

# The JavaScript too: ESLint (eslint.config.mjs), then TypeScript over its JSDoc types, once per
# place it runs (the page, the engine's worker, the service worker, Node), each with its globals.
lint: setup
	$(PY) -m ruff check engine macros tests site-tests tools bench
	$(PY) -m mypy
	node_modules/.bin/eslint .
	node_modules/.bin/tsc -p tsconfig.json
	node_modules/.bin/tsc -p types/tsconfig.worker.json
	node_modules/.bin/tsc -p types/tsconfig.sw.json
	node_modules/.bin/tsc -p types/tsconfig.node.json

test-engine: setup
	$(PY) -m pytest tests -q -p no:cacheprovider

test-site: setup chromium
	$(PY) -m pytest site-tests -q -p no:cacheprovider

test: lint test-engine test-site

# For a Pyodide upgrade: what it touches, checked against node_modules/pyodide (offline).
pyodide-check: setup
	$(PY) tools/pyodide_check.py

bench: setup chromium
	$(PY) bench/bench_engine.py
	$(PY) bench/bench_site.py

clean:
	rm -rf site build .pytest_cache .mypy_cache .ruff_cache
