# benchmarks (bench/)
include bench/engine.mk
