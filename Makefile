# The two commands of the course (README): `make book` and `make test`.
# Both create .venv and install the pinned toolchain first; nothing else is needed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup book test lint bench clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

NPM_STAMP := node_modules/.installed

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

setup: $(STAMP) $(NPM_STAMP)

book: setup
	$(PY) tools/build_book.py

lint: setup
	$(VENV)/bin/ruff check src tests tools

# The tests check the built site too (pages, links, offline loading in Chromium).
test: setup lint book
	$(PY) -m pytest

bench: setup
	$(PY) -m transformer_course.bench all

clean:
	rm -rf _build .pytest_cache .hypothesis
