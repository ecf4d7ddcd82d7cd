# tests: generator
