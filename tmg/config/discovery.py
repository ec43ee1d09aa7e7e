"""Which config a run reads: ``-c PATH``, else ``TMG_CONFIG``, else ``./tmg.yaml`` (a project's,
judged by folder trust), else the user's own file; and the user's own file itself, which a
project's config reads too (its PERMISSIONS hold everywhere; its providers stand in for withheld
ones), read once per load.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from tmg.config.source import parse_yaml, read_config_text
from tmg.errors import ConfigError
from tmg.paths import user_config_dir

PROJECT_FILE = "tmg.yaml"
USER_FILE = "config.yaml"


def discover_config_path(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """``-c PATH``, else ``TMG_CONFIG``, else ``./tmg.yaml``, else the user config dir.

    A path that exists but is not a regular file (a directory, a FIFO) is returned all the
    same: reading it fails with a line saying what it is, instead of being skipped silently.
    """
    if explicit:
        path = Path(explicit).expanduser()
        if not exists(path):
            raise ConfigError(f"config file {path} does not exist (given with -c); check the path")
        return path
    if env.get("TMG_CONFIG"):
        path = Path(env["TMG_CONFIG"]).expanduser()
        if not exists(path):
            raise ConfigError(f"config file {path} does not exist (named by TMG_CONFIG); fix or unset it")
        return path
    local = cwd / PROJECT_FILE
    if exists(local):
        return local
    user = user_config_file(env)
    return user if exists(user) else None


def exists(path: Path) -> bool:
    """True for anything at ``path``, a dangling symlink included (reading it says what is wrong)."""
    return os.path.lexists(path)


def user_config_file(env: Mapping[str, str]) -> Path:
    """The user's own config file (it may not exist)."""
    return user_config_dir(env) / USER_FILE


def project_folder(path: Path, explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The folder of ``path`` when it is a project config (``./tmg.yaml`` found in the working
    folder, not named by ``-c`` or ``TMG_CONFIG``), else None."""
    if explicit or env.get("TMG_CONFIG") or path != cwd / PROJECT_FILE:
        return None
    return Path(os.path.realpath(cwd))


class UserFile:
    """The user's own config file, read at most once per load (as read when first asked)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = user_config_file(env)
        self._read: tuple[str, Any] | None = None

    def read(self) -> tuple[str, Any]:
        """Its text and YAML tree. Raises ConfigError when it cannot be read or parsed."""
        if self._read is None:
            text = read_config_text(self.path)
            self._read = (text, parse_yaml(text, self.path))
        return self._read
