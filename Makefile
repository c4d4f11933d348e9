# Thin wrapper over CMake: `make` builds everything into build/ (CLI at build/hopgen).
JOBS ?= $(shell nproc)
.PHONY: all build test demo format clean
all build:
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j$(JOBS)
test:
	./scripts/test.sh
demo:
	./scripts/demo.sh
format:
	./scripts/format.sh
clean:
	rm -rf build build-asan build-fuzz
