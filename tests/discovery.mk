# tests: discovery
