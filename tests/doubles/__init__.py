"""Small hand-written test doubles with explicit behaviour (no accept-anything mocks).

Here: the model gateway (`model.py`). Doubles of MCP tool callers (fakeplur in-process, scripted
and gated callers) live in `tests/support/doubles.py`."""
