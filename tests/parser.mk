# tests: parser
