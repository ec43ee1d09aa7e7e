"""Token estimates without a tokenizer, and how big the model's window is.

Importing a tokenizer (tiktoken, litellm) costs seconds on the one-shot path; characters / 4 is
within a factor of two for English and code, and :class:`TokenEstimator` corrects it with the
prompt tokens the provider reports, so the estimate converges on the real count of the model in use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from tmg.config.model import Config
from tmg.llm.gateway import ProviderSpec

CHARS_PER_TOKEN = 4
_PER_MESSAGE = 4  # role and framing tokens every chat template adds

# Known windows when the provider config does not say and litellm's map has no entry (prefix match).
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000), ("gpt-5", 400_000), ("o3", 200_000), ("o4-mini", 200_000),
    ("claude", 200_000), ("gemini-2", 1_048_576), ("gemini-1.5", 1_048_576),
    ("llama-3", 128_000), ("llama3", 128_000), ("mistral-large", 128_000), ("deepseek", 128_000),
    ("qwen", 32_768), ("smollm2", 8_192),
)


def content_chars(message: dict[str, Any]) -> int:
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return 0


def message_tokens(message: dict[str, Any]) -> int:
    """The raw (uncalibrated) estimate of one chat message."""
    total = _PER_MESSAGE + content_chars(message) // CHARS_PER_TOKEN
    if message.get("tool_calls"):
        total += len(json.dumps(message["tool_calls"])) // CHARS_PER_TOKEN
    return total


def messages_tokens(messages: Sequence[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages)


def tools_tokens(schemas: Sequence[dict[str, Any]]) -> int:
    """The tool schemas a request carries: providers put them in the prompt, they count."""
    return len(json.dumps(list(schemas), separators=(",", ":"))) // CHARS_PER_TOKEN if schemas else 0


class TokenEstimator:
    """Raw estimates scaled by how the provider's reported prompt tokens compared so far."""

    def __init__(self) -> None:
        self.ratio = 1.0
        self.last_raw = 0  # the raw estimate of the last request sent (set by the final validator)

    def scale(self, raw: int) -> int:
        return int(raw * self.ratio)

    def observe(self, reported_prompt_tokens: int) -> None:
        """Calibrate with the provider's count for the last request (a moving average, bounded)."""
        if reported_prompt_tokens <= 0 or self.last_raw < 200:
            return  # a tiny request says more about framing than about the text
        seen = min(3.0, max(0.5, reported_prompt_tokens / self.last_raw))
        self.ratio = 0.5 * self.ratio + 0.5 * seen


@dataclass(frozen=True)
class Budget:
    """The figures the gatekeeper works with, in (calibrated) tokens."""

    window: int  # what the model takes in
    threshold: int  # past it, prune and then summarise
    hard: int  # past it, the request cannot be sent

    @classmethod
    def for_request(cls, config: Config, provider: ProviderSpec | None) -> "Budget":
        window = context_window(config, provider)
        reserve = (provider.max_tokens or 0) if provider is not None else 0
        hard = max(1000, window - min(reserve, window // 2))  # room for the answer
        threshold = min(int(window * config.compaction.threshold), config.max_history_tokens, hard)
        return cls(window, threshold, hard)


def context_window(config: Config, provider: ProviderSpec | None) -> int:
    """PROVIDERS.<name>.CONTEXT_WINDOW, else CONTEXT_WINDOW, else a known model, else MAX_HISTORY_TOKENS."""
    if provider is not None and provider.context_window:
        return provider.context_window
    if config.context_window:
        return config.context_window
    if provider is not None:
        known = known_window(provider.model)
        if known:
            return known
    return config.max_history_tokens


_known: dict[str, int | None] = {}


def known_window(model: str) -> int | None:
    """The window of a known model: litellm's bundled map (read as JSON, never imported), else
    :data:`KNOWN_WINDOWS`; None for a model tmg does not know."""
    if model in _known:
        return _known[model]
    found: int | None = None
    bare = model.partition("/")[2] or model
    try:
        from tmg.llm.pricing import _entries_for

        for entry in _entries_for([model, bare]):
            if entry and isinstance(entry.get("max_input_tokens"), int):
                found = entry["max_input_tokens"]
                break
    except Exception:  # noqa: BLE001 - a broken map costs the table lookup, never a prompt
        found = None
    if found is None:
        low = bare.lower()
        found = next((size for prefix, size in KNOWN_WINDOWS if low.startswith(prefix)), None)
    _known[model] = found
    return found
