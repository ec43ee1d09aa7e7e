"""Token prices without importing litellm: its bundled price map, read as plain JSON.

``import litellm`` costs seconds; the JSON file it ships (``model_prices_and_context_window_
backup.json``, 3.5 MB) is read only once an answer needs a price, and only the entry needed
is parsed. Locating the package with ``importlib.util.find_spec`` does not import it.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

_PRICE_FILE = "model_prices_and_context_window_backup.json"
_lock = threading.Lock()
_entries: dict[str, dict[str, Any] | None] = {}  # model key -> its price entry, looked up once
_whole: dict[str, Any] | None = None  # only if the file is not laid out as expected


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


def _entries_for(keys: list[str]) -> list[dict[str, Any] | None]:
    """The price entries for ``keys``, parsing only those entries when the file's layout allows.

    The map is 3.5 MB of pretty-printed JSON; parsing all of it costs 40 to 65 ms and 11 MB at
    peak, while finding ``\n    "key": {`` and parsing that one object costs a few ms.
    """
    with _lock:
        missing = [k for k in keys if k not in _entries]
        if missing:
            try:
                path = price_map_path()
                raw = path.read_bytes() if path else b""
            except OSError:
                raw = b""  # a broken install costs us prices, never an answer
            for key in missing:
                _entries[key] = _find(raw, key)
        return [_entries[k] for k in keys]


def _find(raw: bytes, key: str) -> dict[str, Any] | None:
    global _whole
    try:
        needle = b"\n    " + json.dumps(key).encode() + b": {"
        pos = raw.find(needle)
        if pos >= 0:
            start = pos + len(needle) - 1
            end = raw.find(b"\n    }", start)
            entry = json.loads(raw[start : end + 6]) if end > 0 else None
        elif raw and not raw.startswith(b'{\n    "'):  # another layout: parse it all, once
            if _whole is None:
                loaded = json.loads(raw)
                _whole = loaded if isinstance(loaded, dict) else {}
            entry = _whole.get(key)
        else:
            entry = None
    except ValueError:
        entry = None
    return entry if isinstance(entry, dict) else None


def is_known_model(model: str) -> bool:
    """Whether litellm's price map has an entry for ``model``."""
    return _entries_for([model])[0] is not None


def _entry(model: str) -> dict[str, Any] | None:
    """The price map's entry for ``model``; ``openai/gpt-4o-mini`` is found as ``gpt-4o-mini``."""
    provider, _, bare = model.partition("/")
    entry, bare_entry = _entries_for([model, bare] if bare else [model, model])
    if entry is None and bare and bare_entry is not None:
        # litellm keys OpenAI's models without a prefix; a same-named model of another
        # provider must not borrow its entry.
        entry = bare_entry if bare_entry.get("litellm_provider") in (provider, None) else None
    return entry if isinstance(entry, dict) else None


def supports_vision(model: str) -> bool:
    """Whether litellm's map says ``model`` takes image input (an unknown model: no)."""
    entry = _entry(model)
    return bool(entry and entry.get("supports_vision"))


def cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for one call, or None when the model is not in the price map.

    ``model`` is the configured litellm-style id; ``openai/gpt-4o-mini`` is found as
    ``gpt-4o-mini``, the way litellm keys OpenAI's models.
    """
    entry = _entry(model)
    if entry is None:
        return None
    per_in, per_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(per_in, (int, float)) or not isinstance(per_out, (int, float)):
        return None
    return prompt_tokens * per_in + completion_tokens * per_out
