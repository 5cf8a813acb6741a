# Phalanx: the entry points a newcomer uses. CMake does the building; this file
# only names the steps. See README.md.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
NPROC      := $(shell nproc)

CHAOS_SECONDS ?= 600
CHAOS_SEED ?=

.PHONY: all build asan deps test unit bench fuzz demo clean check-style chaos

all: build

deps:
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DPX_SANITIZE=ON

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(NPROC)

asan: $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(NPROC)

check-style:
	@scripts/check-style.sh

# The whole suite: warnings are errors in both builds; the tests run against the
# ASan+UBSan build (LeakSanitizer included), so a leak or UB fails them.
test: deps check-style build asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(NPROC) --timeout 600

# The chaos test at length (its short form runs in `make test`): kill -9 of
# the server and agents under a storm of requests; CHAOS_SEED=<seed> replays
# a failed run's choices (the seed is printed).
chaos: deps build asan
	PHALANX=$(CURDIR)/$(ASAN_BUILD)/phalanx PX_SRC=$(CURDIR) CHAOS_SECONDS=$(CHAOS_SECONDS) \
	  CHAOS_SEED=$(CHAOS_SEED) bash tests/integration/test_chaos.sh

bench: deps build
	@scripts/bench.sh $(BUILD)

fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=Debug -DPX_FUZZ=ON -DPX_WERROR=ON
	cmake --build $(FUZZ_BUILD) -j $(NPROC)
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

demo: deps build
	@scripts/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
