# Front for CMake. Two flavours, each built once: build/release and build/asan
# (AddressSanitizer + UndefinedBehaviorSanitizer). A third, build/tsan
# (ThreadSanitizer), covers the threaded parts: `make test-tsan`.
JOBS ?= $(shell nproc)
RELEASE := build/release
ASAN := build/asan
TSAN := build/tsan
CTEST_FLAGS ?= --output-on-failure -j $(JOBS)
# ccache hits across clones in other folders (CI builds a fresh clone).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
# The project's own builds treat warnings as errors; a plain cmake does not.
WERROR := -DGPUSCOPE_WERROR=ON

.PHONY: all setup build asan run serve test test-release test-asan tsan test-tsan format format-check bench dist clean screenshot stage deb fleet

all: build

setup:
	scripts/setup.sh

$(RELEASE)/CMakeCache.txt:
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(WERROR)

$(ASAN)/CMakeCache.txt:
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DGPUSCOPE_SANITIZE=ON $(WERROR)

build: $(RELEASE)/CMakeCache.txt
	cmake --build $(RELEASE) -j $(JOBS)

asan: $(ASAN)/CMakeCache.txt
	cmake --build $(ASAN) -j $(JOBS)

$(TSAN)/CMakeCache.txt:
	cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCOPE_TSAN=ON $(WERROR)

tsan: $(TSAN)/CMakeCache.txt
	cmake --build $(TSAN) -j $(JOBS) --target tsan_checked

# The main job: the GPU status table, on real GPUs when a driver answers,
# else on a simulated node. Builds only the agent and the simulator.
run: setup $(RELEASE)/CMakeCache.txt
	cmake --build $(RELEASE) -j $(JOBS) --target gpuscope nvidia-ml-sim sim_scenarios
	scripts/run.sh $(RELEASE)

test: setup format-check stage test-release test-asan

# scripts/ctest.sh lists each skipped test with its reason after ctest's summary.
test-release: build
	scripts/ctest.sh $(RELEASE) $(CTEST_FLAGS)

test-asan: asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/ctest.sh $(ASAN) $(CTEST_FLAGS)

# Unit tests of base (its worker thread), collect, http, health (events included) and the serve
# assembly. Any report fails the run (scripts/test-tsan.sh; tests/tsan.supp
# says why each entry exists). Wider, not yet run clean (docs/threads.md):
# TSAN_TESTS='^(collect|http|health|attribution|serve)\.|^integration\.test_(serve_|attribution_|hung_call|missing_driver)'
TSAN_TESTS ?= ^(base|collect|http|health|serve)\.
test-tsan: tsan
	scripts/test-tsan.sh $(TSAN) '$(TSAN_TESTS)' $(CTEST_FLAGS)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.cc' '*.h')

bench: setup build
	scripts/bench.sh $(RELEASE)

# The fleet at scale (minutes, so not in `make test`): FLEET_NODES simulated
# 8-GPU nodes through sharded vmagents into VictoriaMetrics with vmalert
# (tests/fleet/test_fleet_scale.py); the figures land in fleet-results.json.
FLEET_NODES ?= 200
fleet: setup build
	GPUSCOPE_BUILD_DIR=$(CURDIR)/$(RELEASE) python3 tests/fleet/test_fleet_scale.py \
		--nodes $(FLEET_NODES) --out $(RELEASE)/fleet-results.json

# A self-contained copy (dist/gpuscope: the binary, its libraries in lib/, the
# simulator) for hosts that install nothing; scripts/real_gpu_check.sh runs it
# beside nvidia-smi on a GPU machine (docs/compatibility.md).
dist: build
	scripts/dist.sh $(RELEASE) dist/gpuscope

# What users install, built the way they build it: a plain Release configure
# (GCC here; the image's build stage runs the same scripts/stage-image.sh)
# staged into build/stage, and the Debian package from it. `make test` builds
# the stage first, so its packaging tests (test_image_stage, test_deb) find
# the Release build done and this configuration cannot regress.
STAGE := build/stage
stage: setup
	GPUSCOPE_CMAKE_ARGS="$(WERROR) $(if $(RUNBOOK_URL_BASE),-DGPUSCOPE_RUNBOOK_URL_BASE=$(RUNBOOK_URL_BASE))" \
	  scripts/stage-image.sh $(STAGE) build/image

deb: stage
	scripts/build-deb.sh $(STAGE) dist

clean:
	rm -rf build dist

# The README's picture of the web page (docs/api.md), from the simulator.
screenshot: $(RELEASE)/CMakeCache.txt
	cmake --build $(RELEASE) -j $(JOBS) --target gpuscope nvidia-ml-sim sim_scenarios
	python3 scripts/screenshot.py $(RELEASE) docs/images/web-page.png

# Fuzzing (issue 15): libFuzzer targets built with clang in build/fuzz.
# `make fuzz` runs each target FUZZ_SECONDS (default 20, what `make test`
# runs); longer runs: `make fuzz FUZZ_SECONDS=3600`. Crashes land in
# build/fuzz/runs/<target>/ and fail the run.
FUZZ := build/fuzz
FUZZ_SECONDS ?= 20
.PHONY: fuzz fuzz-build

$(FUZZ)/CMakeCache.txt:
	cmake -S . -B $(FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCOPE_FUZZ=ON $(WERROR) \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang

fuzz-build: $(FUZZ)/CMakeCache.txt
	cmake --build $(FUZZ) -j $(JOBS) --target fuzz_targets

fuzz: fuzz-build
	scripts/fuzz.sh $(FUZZ) $(FUZZ_SECONDS)

test: fuzz
