# benchmarks (bench/)
