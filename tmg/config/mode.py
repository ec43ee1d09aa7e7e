"""The MODE a run keeps its sessions under, read without the whole loader.

``tmg -t`` needs one key of the config (with TMG_HOME and the project); the schema, the typed
Config, folder trust, even PyYAML would cost it more than the rest of its run (P1). A MODE
written plainly (a name in ``TMG_MODE`` or in the file, or none at all) is read here; any other
spelling (a ``${VAR}``, a number, a key in two cases, a value the schema refuses) is left to
tmg.config.loader, so the answer is always the loader's (tests/config/test_mode.py compares the
two). Only what decides the mode is read: the file is found as ever, but not read when
``TMG_MODE`` is set, nor its YAML parsed when its text holds no key that could be MODE. Whatever
else is wrong in the file is the loader's to say, when a run uses the config.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from tmg.config.discovery import discover_config_path
from tmg.config.source import parse_yaml, read_config_text

# A mode names a folder of sessions: a plain name, never a path.
MODE_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
DEFAULT_MODE = "default"
_NAME = re.compile(MODE_PATTERN)
# TMG_MODE is read as YAML: a name that starts with a letter is the text it is, except YAML 1.1's
# booleans and null (any case here: a rarer spelling is only left to the loader).
_YAML_WORDS = frozenset(("yes", "no", "true", "false", "on", "off", "null"))
# A key is MODE when its upper-case text is: such a key shows as this word in the upper-cased
# file, unless written with an escape (`"\x4dODE"`), so a file with neither sets no MODE.
_MODE_WORD = re.compile(r"\bMODE\b")


def plain_mode(explicit: str | None, env: Mapping[str, str], cwd: Path) -> str | None:
    """The config's MODE when it is written plainly, else None (ask the loader).

    Raises:
        ConfigError: the config file it must read cannot be found, read or parsed (as the loader
            says it).
    """
    path = discover_config_path(explicit, env, cwd)  # a -c or TMG_CONFIG naming nothing is said
    given = env.get("TMG_MODE")
    if given is not None:  # it replaces the file's MODE, however the file spells it
        return given if _NAME.fullmatch(given) and given[0].isalpha() and given.lower() not in _YAML_WORDS else None
    if path is None:
        return DEFAULT_MODE
    text = read_config_text(path)
    if "\\" not in text and not _MODE_WORD.search(text.upper()):
        return DEFAULT_MODE
    raw = parse_yaml(text, path)
    if raw is not None and not isinstance(raw, dict):
        return None  # the loader says what the top level must be
    values = [v for k, v in (raw or {}).items() if str(k).upper() == "MODE"]
    if not values or values == [None]:
        return DEFAULT_MODE  # `MODE:` with nothing after it means the default, as for any key
    if len(values) == 1 and isinstance(values[0], str) and _NAME.fullmatch(values[0]):
        return values[0]
    return None
