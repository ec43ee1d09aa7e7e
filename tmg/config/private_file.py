"""A small JSON file of the user's that only they may read (0600), replaced atomically
(`tmg.atomic_file`): a crash leaves the old content or the new, and the content is never
readable by others, not even for a moment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file


def write_private_json(path: Path, data: Any) -> None:
    replace_file(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"), mode=0o600, durable=True)
