# symnb: `make demo` sets everything up and runs the main job; `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: demo tour lab test test-opencl lint format bench clean docs mutate fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# The files pip builds the C runner from (setup.py): a stamp is redone when they change too, so
# the package's build stays that of runner.c (else each new compile directory builds its own
# copy on first use, about a second, which W5's cold probes would count).
RUNNER_SOURCES := setup.py $(wildcard symnb/backends/c/runner*.[ch]) symnb/backends/render/runtime.h

# One stamp per set of extras, redone when pyproject.toml or the runner's sources change.
$(VENV)/.stamp-%: pyproject.toml $(RUNNER_SOURCES) | $(BIN)/python
	$(PIP) install -q -e ".[$*]"
	touch $@

# The main job: execute the tour notebook headlessly into build/tour.html.
demo: $(VENV)/.stamp-demo,notebook
	@$(MAKE) --no-print-directory tour JUPYTER=$(BIN)/jupyter
	@echo "the tour, with every output, is in build/tour.html"

# The tour as a static page that works offline: formulas are MathML written while the notebook
# runs, and the stepper's static twin (every step embedded) shows beside the stored widget.
# tests/browser/test_tour_html.py runs this target.
JUPYTER ?= jupyter
BUILD   ?= build
tour:
	@mkdir -p $(BUILD)
	$(JUPYTER) nbconvert --to html --execute --ExecutePreprocessor.timeout=600 \
		--ExecutePreprocessor.kernel_name=python3 \
		--output-dir $(BUILD) --output tour notebooks/00_tour.ipynb

lab: $(VENV)/.stamp-demo,notebook
	$(BIN)/jupyter lab --notebook-dir=notebooks

# One process per core (pytest-xdist), then the tests that read what the whole suite generated
# (the after_suite mark: every kernel it lowered, rendered in every dialect, in parts) in a run
# of their own, also one process per core. A plain `pytest` runs both in one process.
KERNELS := $(BUILD)/suite-kernels
# The suite with the nvrtc extra (NVRTC: CUDA kernels compile, no GPU needed) and the interop
# extra (torch, JAX, pandas, xarray, Dask) too, so their tests run; `pip install -e
# .[test]` alone leaves them out and those tests skip, saying why.
test: $(VENV)/.stamp-test,nvrtc,interop
	rm -rf $(KERNELS)
	SYMNB_SUITE_KERNELS=$(KERNELS) $(BIN)/python -m pytest -n auto -m "not after_suite"
	SYMNB_SUITE_KERNELS=$(KERNELS) $(BIN)/python -m pytest -n auto -m after_suite

# Only the op suite's backend="opencl" rows (PoCL on the CPU), which `make test` runs with the
# rest; a missing OpenCL device fails instead of skipping (docs/gpu_backends.md).
test-opencl: $(VENV)/.stamp-test
	SYMNB_REQUIRE_OPENCL=1 $(BIN)/python -m pytest tests/ops -k opencl

# The differential fuzzer (tests/fuzz) with new random graphs for FUZZ_SECONDS (default 60).
FUZZ_SECONDS ?= 60
fuzz: $(VENV)/.stamp-test
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m tests.fuzz

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.stamp-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The peers (numexpr, PyTensor, JAX, PyTorch CPU) come from the bench extra; one that fails to
# install is reported by the suite as not run.
$(VENV)/.stamp-bench: pyproject.toml $(RUNNER_SOURCES) | $(BIN)/python
	$(PIP) install -q -e .
	$(PIP) install -q -e ".[bench]" || echo "make bench: not every peer installed; the suite skips the absent ones"
	touch $@

# LOADED=1: each workload idle, then beside a process spinning on one core; ONE_THREAD=1 adds
# a one-thread twin of every peer; BASELINE=REV adds symnb of commit REV (symnb-base) and prints
# new/base ratios; BENCH_ARGS passes anything else (docs/benchmarks.md, "Running it").
LOADED ?=
ONE_THREAD ?=
BASELINE ?=
BENCH_ARGS ?=
bench: $(VENV)/.stamp-bench
	$(BIN)/python -m benchmarks $(if $(LOADED),--loaded) $(if $(ONE_THREAD),--one-thread) \
		$(if $(BASELINE),--baseline $(BASELINE)) $(BENCH_ARGS)

# Mutation testing of the modules where a silent bug costs most, one group (a module and the
# tests that cover it) at a time, each in its own copy under build/mutate/GROUP (tests/mutate.py
# lists the groups). MUTATE='dims linalg-grads' runs only those groups. It prints each group's
# score table and survivors; `cd build/mutate/GROUP && ../../../.venv/bin/mutmut show NAME`
# shows one. Scores, triage and timings: docs/mutation.md. Not part of `make test`.
MUTATE ?=
mutate: $(VENV)/.stamp-mutate
	$(BIN)/python -m tests.mutate $(MUTATE)

docs: $(VENV)/.stamp-test
	$(BIN)/python -m symnb.catalogue

clean:
	rm -rf $(VENV) build dist mutants *.egg-info .pytest_cache .ruff_cache .hypothesis symnb/backends/c/_runner*.so
