"""Files that hold secrets by nature: reading (or writing) one needs consent even inside a root.

The tools may say so themselves (`ToolAction.sensitive`); the engine also checks every path an
action names, so a tool that forgets cannot leak `/proc/self/environ` (tmg's own provider keys),
and the model cannot write itself a permission through tmg's own config folder.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Mapping

_ANYWHERE = ("*/.env", "*/.env.*", "*/.netrc", "*/.pgpass", "*/id_rsa", "*/id_ed25519", "*/id_ecdsa")
_SYSTEM = ("/proc/*/environ", "/proc/*/mem", "/proc/*/cmdline", "/etc/shadow", "/etc/gshadow",
           "/etc/sudoers", "/etc/sudoers.d/*", "/etc/ssh/ssh_host_*_key")
_IN_HOME = (".ssh", ".aws", ".gnupg", ".kube", ".docker/config.json", ".config/gh", ".npmrc", ".pypirc",
            ".git-credentials")


class SensitivePaths:
    """Which paths hold secrets, for one user (their home, tmg's config folder and TMG_HOME)."""

    def __init__(self, env: Mapping[str, str], home: str) -> None:
        from tmg.config.trust import user_config_dir
        from tmg.session.store import tmg_home

        self._folders = [os.path.join(home, p) for p in _IN_HOME]
        self._folders.append(str(user_config_dir(env)))
        self._folders.append(str(tmg_home(env)))
        self._folders = [os.path.realpath(f) for f in self._folders]

    def reason(self, path: str) -> str | None:
        """Why `path` (absolute, normalised) needs consent, or None."""
        for folder in self._folders:
            if path == folder or path.startswith(folder + os.sep):
                return f"{path} holds secrets or tmg's own settings"
        for pattern in _SYSTEM + _ANYWHERE:
            if fnmatch.fnmatchcase(path, pattern):
                return f"{path} holds secrets by nature"
        return None
