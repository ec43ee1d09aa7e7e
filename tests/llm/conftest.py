"""Fixtures for the gateway backends: a live mock LLM, and each backend in turn."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from e2e.mock_llm import MockLLM
from tmg.llm.gateway import ProviderSpec

BACKENDS = ["native", "litellm"]


@pytest.fixture
def llm() -> Iterator[MockLLM]:
    with MockLLM() as mock:
        yield mock


@pytest.fixture(params=BACKENDS)
def backend(request: Any) -> str:
    return str(request.param)


@pytest.fixture
def provider(llm: MockLLM, backend: str) -> ProviderSpec:
    """A provider pointing at the mock, on the backend under test."""
    return ProviderSpec(name="local", model="openai/mock", api_key="sk-test-secret-123", api_base=llm.url,
                        backend=backend)
