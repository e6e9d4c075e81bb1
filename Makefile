# The two set-up commands: `make demo` and `make test`. Both install what is missing,
# configure and build first.
BUILD ?= build
JOBS ?= 2
BUILD_TYPE ?= RelWithDebInfo
TPUSIM := $(BUILD)/tools/tpusim/tpusim

.PHONY: all bootstrap configure build demo test bench clean format

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@scripts/demo $(TPUSIM)

test: build
	@ctest --test-dir $(BUILD) -j$(JOBS) --output-on-failure --timeout 300

bench: build
	@$(TPUSIM) bench all_gather_bidi --topology v5e-16x16 --axis x --min-bytes 1G --max-bytes 1G --timing-only

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	@rm -rf $(BUILD)
