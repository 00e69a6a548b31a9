# The front door: `make run` and `make test` install what is missing, configure, build
# and run. Everything else is CMake (see CMakeLists.txt) and scripts/.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps configure build run test bench bench-redblack bench-mg bench-mpi bench-hybrid clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The main job on the best backend found: the spike problem at a size and sweep count
# whose spread shows in results/run.png (log colour scale, chosen by the writer), then the
# manufactured problem solved to 1e-8 by multigrid (CPU), progress per cycle.
run: build
	@mkdir -p results
	$(BUILD)/hetrelax info --no-bandwidth
	$(BUILD)/hetrelax poisson2d --n 2048 --iters 5000 --json results/run.json --output results/run.png
	$(BUILD)/hetrelax poisson2d --method mg --n 2047 --rhs manufactured --tol 1e-8 --json results/mg.json
	@echo "results: results/run.json results/run.png results/mg.json"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	python3 bench/experiments/cpu2d.py --bench $(BUILD)/bench/cpu_bench --out results

# the other experiments, one target each (they take minutes to hours; docs/ says where to run them)
bench-redblack: build
	python3 bench/experiments/redblack_convergence.py --build $(BUILD)
bench-mg: build
	python3 bench/experiments/mg_bench.py --build $(BUILD)
bench-mpi: build
	python3 bench/experiments/mpi_scaling.py --build $(BUILD)
bench-hybrid: build
	python3 bench/experiments/hybrid_experiments.py cpu-check --build $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan results
