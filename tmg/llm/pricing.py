"""Token prices without importing litellm: its bundled price map, read as plain JSON.

``import litellm`` costs seconds; the JSON file it ships (``model_prices_and_context_window_
backup.json``, a few MB) costs a fraction of that and is only read once a priced answer needs
it. Locating the package with ``importlib.util.find_spec`` does not import it.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

_PRICE_FILE = "model_prices_and_context_window_backup.json"
_lock = threading.Lock()
_prices: dict[str, Any] | None = None


def price_map_path() -> Path | None:
    """Where litellm's bundled price map lives, or None when litellm is not installed."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / _PRICE_FILE
    return path if path.is_file() else None


def _load() -> dict[str, Any]:
    global _prices
    with _lock:
        if _prices is None:
            path = price_map_path()
            try:
                data = json.loads(path.read_bytes()) if path else {}
            except (OSError, ValueError):
                data = {}  # a broken install costs us prices, never an answer
            _prices = data if isinstance(data, dict) else {}
        return _prices


def cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for one call, or None when the model is not in the price map.

    ``model`` is the configured litellm-style id; ``openai/gpt-4o-mini`` is found as
    ``gpt-4o-mini``, the way litellm keys OpenAI's models.
    """
    prices = _load()
    entry = prices.get(model)
    if entry is None and "/" in model:
        provider, _, bare = model.partition("/")
        entry = prices.get(bare)
        if entry is not None and entry.get("litellm_provider") not in (provider, None):
            entry = None  # same bare name, another provider's price
    if not isinstance(entry, dict):
        return None
    per_in, per_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(per_in, (int, float)) or not isinstance(per_out, (int, float)):
        return None
    return prompt_tokens * per_in + completion_tokens * per_out
