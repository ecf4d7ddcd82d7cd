# tests: outputs
