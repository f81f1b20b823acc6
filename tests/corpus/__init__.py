"""The hostile-input corpus: case tables and IR files (run by tests/test_corpus.py)."""
