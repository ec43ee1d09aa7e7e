"""Memory unit tests use the doubles in tests/support/doubles.py (no server processes)."""
