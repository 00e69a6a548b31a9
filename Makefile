# The front door: `make run` and `make test` install what is missing, configure, build
# and run. Everything else is CMake (see CMakeLists.txt) and scripts/.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The main job on the best backend found: the spike problem at a size and sweep count
# whose spread shows in results/run.png (log colour scale, chosen by the writer).
run: build
	@mkdir -p results
	$(BUILD)/hetrelax info --no-bandwidth
	$(BUILD)/hetrelax poisson2d --n 2048 --iters 5000 --json results/run.json --output results/run.png
	@echo "results: results/run.json results/run.png"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	python3 bench/cpu2d.py $(BUILD)/hetrelax --out results

clean:
	rm -rf $(BUILD) build-asan build-tsan results
