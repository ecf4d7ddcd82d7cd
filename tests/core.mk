# tests: core
