"""Small hand-written test doubles with explicit behaviour (no accept-anything mocks)."""
