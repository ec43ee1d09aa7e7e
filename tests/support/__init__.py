"""Reusable test helpers (servers, doubles) shared by unit, contract and e2e tests."""
