# The book's commands. Every target sets up what it needs; a second run is fast.
#   make book   -- set up, fetch the data, build the HTML book from the stored notebook outputs
#   make test   -- set up, then every package test, the browser test of the built book,
#                  and every notebook under nbval at BOOK_SCALE=ci
# See README.md for the others (lab, execute, test-peers, bench, clean).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.stamps
TORCH_VERSION := 2.13.0
JOBS ?= 2
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help setup data assets browser book test test-package test-notebooks test-browser \
        test-peers kenlm bench lab execute clean clean-all

help:
	@sed -n '1,8p' Makefile

# --- set-up ------------------------------------------------------------------------------
$(STAMP)/venv:
	$(PYTHON) -m venv $(VENV)
	mkdir -p $(STAMP) && touch $@

# torch first, pinned: a bare `torch` requirement could pull a multi-GB CUDA build.
$(STAMP)/torch: $(STAMP)/venv
	$(PIP) install -q torch==$(TORCH_VERSION)
	touch $@

$(STAMP)/install: $(STAMP)/torch pyproject.toml
	$(PIP) install -q -e '.[book,test,peers]'
	touch $@

setup: $(STAMP)/install

data: setup
	$(PY) -m companion.data fetch --all

# MathJax, require.js and the widget manager, served from local copies (npm registry).
assets: setup
	$(PY) -m companion.book_assets

# Debian's chromium for the browser test (Playwright drives it; never `playwright install`).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# --- the book ----------------------------------------------------------------------------
book: data assets
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

# --- tests -------------------------------------------------------------------------------
test: data assets browser
	$(MAKE) --no-print-directory test-package
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory test-browser
	$(MAKE) --no-print-directory test-notebooks

test-package: setup
	$(PY) -m pytest tests -m "not peers and not browser" -n $(JOBS) -q

test-browser: setup
	$(PY) -m pytest tests -m browser -q

test-notebooks: setup
	BOOK_SCALE=ci $(PY) -m pytest --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg \
	  --nbval-current-env --nbval-cell-timeout=600 -n $(JOBS) --dist loadfile -q -p no:randomly

# Parity tests against gensim, NLTK and KenLM (KenLM's lmplz is built from PyPI's source).
kenlm: setup
	$(PY) -m companion.peers.kenlm_build

test-peers: setup kenlm
	$(PY) -m pytest tests -m peers -q

bench: setup data kenlm
	$(PY) -m benchmarks

# --- working on the notebooks ------------------------------------------------------------
lab: data
	$(VENV)/bin/jupyter lab notebooks/

# Re-execute every notebook at laptop scale and store the outputs the book shows.
execute: data
	BOOK_SCALE=laptop $(PY) -m companion.execute notebooks/*.ipynb

clean:
	rm -rf _build
clean-all: clean
	rm -rf $(VENV)
