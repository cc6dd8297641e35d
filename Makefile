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
# Build sdists the PEP 517 way: seqeval 1.2.2 (peers) has no wheel, and its legacy setup.py build
# (pip's choice when `wheel` is installed) fails on its setup_requires.
export PIP_USE_PEP517 := 1
# Idle OpenMP threads sleep instead of spinning: with two processes on two cores (pytest -n 2,
# or a busy machine) spinning threads slowed torch training 10-20x (measured in chapter 2).
export OMP_WAIT_POLICY := PASSIVE
# The local mirror of the datasets that live in public repositories (see README, "Data"): used
# when ../shared/data exists beside the repository (CI, the development machines); readers
# elsewhere download the same files from their canonical URLs (same sha256).
ifneq ($(wildcard ../shared/data/MANIFEST.tsv),)
export BOOK_DATA_MIRROR := $(abspath ../shared/data)
endif

.PHONY: help setup data assets browser book test test-package test-notebooks test-browser \
        test-peers kenlm kenlm-deps bench lab student course grade execute check-portable clean clean-all

help:
	@sed -n '1,8p' Makefile

# --- set-up ------------------------------------------------------------------------------
$(STAMP)/venv:
	$(PYTHON) -m venv $(VENV)
	mkdir -p $(STAMP) && touch $@

# torch first, pinned: a bare `torch` requirement could pull a multi-GB CUDA build.
# (The stamp names the version, so changing TORCH_VERSION reinstalls.)
$(STAMP)/torch-$(TORCH_VERSION): $(STAMP)/venv
	$(PIP) install -q torch==$(TORCH_VERSION)
	touch $@

$(STAMP)/install: $(STAMP)/torch-$(TORCH_VERSION) pyproject.toml
	$(PIP) install -q -e '.[book,test,peers]'
	touch $@

setup: $(STAMP)/install

data: setup
	$(PY) -m companion.data fetch --all

# MathJax, require.js and the widget manager, served from local copies (npm registry).
assets: setup
	$(PY) -m companion.book_assets

# Debian's chromium for the browser test (Playwright drives it; never `playwright install`).
# Without apt-get (macOS, ...) install Chromium yourself and set BOOK_CHROMIUM to its path.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
browser:
	@if [ -x "$${BOOK_CHROMIUM:-/usr/bin/chromium}" ]; then :; \
	elif command -v apt-get >/dev/null; then \
	  echo "installing Debian's chromium (apt-get)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; \
	else echo "make browser: no apt-get here; install Chromium and set BOOK_CHROMIUM" \
	  "(the browser test skips without it, and fails under CI=true)"; fi

# --- the book ----------------------------------------------------------------------------
book: data assets
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

# --- tests -------------------------------------------------------------------------------
# Runs every stage even if an earlier one fails, then fails if any did (CI sees everything).
test: data assets browser
	@failed=""; \
	for step in test-package test-peers book test-browser test-notebooks; do \
	  echo "=== make $$step"; \
	  $(MAKE) --no-print-directory $$step || failed="$$failed $$step"; \
	done; \
	if [ -n "$$failed" ]; then echo "=== FAILED:$$failed"; exit 1; fi; \
	echo "=== all tests passed (screenshots of the built book: _build/screenshots/)"

test-package: setup
	$(PY) -m pytest tests -m "not peers and not browser" -n $(JOBS) -q

# Needs the built book (`make book`); the screenshots go to _build/screenshots/.
test-browser: setup browser
	$(PY) -m pytest tests -m browser -q

test-notebooks: setup
	BOOK_SCALE=ci $(PY) -m pytest --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg \
	  --nbval-current-env --nbval-cell-timeout=600 -n $(JOBS) --dist loadfile -q -p no:randomly

# Parity tests against gensim, NLTK and KenLM (KenLM's lmplz is built from PyPI's source).
# KenLM's build needs Debian's boost, cmake and compression headers (installed once, if missing).
KENLM_APT := libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev \
             cmake zlib1g-dev libbz2-dev liblzma-dev
kenlm-deps:
	@if dpkg -s $(KENLM_APT) >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null; then \
	  echo "installing KenLM's build dependencies (apt-get)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(KENLM_APT) >/dev/null; \
	else echo "make kenlm-deps: no apt-get here; install: $(KENLM_APT)"; fi

kenlm: setup kenlm-deps
	$(PY) -m companion.peers.kenlm_build

test-peers: setup kenlm
	$(PY) -m pytest tests -m peers -q -n $(JOBS) --dist loadfile

bench: setup data kenlm
	$(PY) -m benchmarks

# --- working on the notebooks ------------------------------------------------------------
# JupyterLab serves the repository root and opens the chapters. The kernels get the root on
# PYTHONPATH (a notebook runs in notebooks/), so `import solutions` works; root needs --allow-root.
LAB_ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
lab: data
	PYTHONPATH="$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH}" $(VENV)/bin/jupyter lab $(LAB_ALLOW_ROOT) \
	  --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/notebooks

# The chapters as a student gets them: no solutions, exercise cells as stubs without outputs.
student: setup
	$(PY) -m companion.student --out _build/student

# The course in a box: slides for every lecture, the syllabus, the student edition and the
# instructor edition (answers), all offline, in _build/course/ (open index.html).
course: setup assets
	$(PY) -m companion.course --out _build/course

# Grade a class: every notebook under SUBMISSIONS (alice.ipynb, or alice/... per student) in its
# own kernel, TIMEOUT_S seconds each, no network; gradebook.csv and feedback/ in _build/grades/.
#   make grade SUBMISSIONS=~/course/hw1 TIMEOUT_S=900
SUBMISSIONS ?= submissions
TIMEOUT_S ?= 600
grade: setup
	$(PY) -m companion.grade "$(SUBMISSIONS)" --out _build/grades --timeout-s $(TIMEOUT_S) --jobs $(JOBS)

# Re-execute every notebook at laptop scale and store the outputs the book shows.
execute: data
	BOOK_SCALE=laptop $(PY) -m companion.execute notebooks/*.ipynb

# After `make execute`, before committing stored outputs: the stored-digits test, then the
# notebooks under nbval at BOOK_SCALE=ci on another CPU's kernels (OpenBLAS, torch's ATen, MKL,
# oneDNN and numpy's SIMD loops forced to AVX2 on an AVX-512 machine, else to SSE), so that an
# output that only this CPU reproduces fails here and not in CI. As long as test-notebooks.
#   make check-portable NOTEBOOKS=notebooks/10a_transfer.ipynb   -- one notebook
NOTEBOOKS ?= notebooks
check-portable: data
	$(PY) -m companion.portable --jobs $(JOBS) $(NOTEBOOKS)

clean:
	rm -rf _build
clean-all: clean
	rm -rf $(VENV) book/_offline
