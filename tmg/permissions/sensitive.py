"""Files that hold secrets by nature: even inside an allowed root, reading one needs consent.

One classification for every tool that touches files (and the permission engine): a tool's
ToolAction carries `sensitive` (the reason) when a path it names is one of these, and a search
that walks a folder skips them unless the folder itself was named (and so consented to).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tmg.paths import real_path as _real, tmg_home, user_config_dir

# Folders of the user's home whose every file is a credential store.
_HOME_SECRET_DIRS = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store",
                     ".config/gcloud", ".config/gh")
# Single files of the user's home that hold passwords or tokens.
_HOME_SECRET_FILES = (".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".my.cnf")
# Key material by file name, wherever it lies.
_KEY_NAMES = frozenset({"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
                        "credentials.json", "service-account.json", "secrets.yaml", "secrets.yml"})
_KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".asc", ".gpg")
_SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")
# /proc/<pid>/environ holds a process's whole environment (tmg's provider keys among it).
_PROC_SECRETS = frozenset({"environ", "mem", "auxv"})


class SensitivePaths:
    """Tells whether a path holds secrets by nature, and why (for the consent prompt). Plain
    string work: the permission engine asks it about every word of a shell line."""

    def __init__(self, env: Mapping[str, str], configs: Iterable[Path | str | None] = ()) -> None:
        home = Path(env.get("HOME") or Path.home())
        self._dirs: list[tuple[str, str]] = [(_real(home / d), f"~/{d} holds credentials") for d in _HOME_SECRET_DIRS]
        self._dirs.append((_real(user_config_dir(env)), "tmg's own config folder (provider keys)"))
        self._dirs.append((_real(tmg_home(env)), "TMG_HOME (tmg's sessions and memory)"))
        self._files: dict[str, str] = {_real(home / f): f"~/{f} holds credentials" for f in _HOME_SECRET_FILES}
        self._files.update({f: f"{f} holds password hashes" for f in _SYSTEM_SECRETS})
        for config in (env.get("TMG_CONFIG"), *configs):  # the config in use, whatever its path
            if config:
                self._files[_real(Path(config))] = "tmg's config file (provider keys)"

    def reason(self, path: Path | str, real: str | None = None) -> str | None:
        """Why ``path`` needs consent to read, or None. Symlinks are resolved (or `real` is what
        the caller resolved it to): a link named `notes.txt` to `.env` is `.env`."""
        plain = str(path)
        found = self._reason(plain)
        if found:
            return found
        real = real if real is not None else _real(plain)
        return self._reason(real) if real != plain else None

    def any(self, paths: Iterable[Path | str]) -> str | None:
        """The first reason among ``paths``, or None."""
        return next((r for r in map(self.reason, paths) if r), None)

    def _reason(self, path: str) -> str | None:
        name = path.rsplit("/", 1)[-1]
        if name.startswith(".env"):
            return f"{name} files hold secrets (environment variables, keys)"
        if path.startswith("/proc/") and name in _PROC_SECRETS:
            return f"{path} exposes a process's environment or memory"
        if name in _KEY_NAMES or name.endswith(_KEY_SUFFIXES):
            return f"{name} looks like key material"
        why = self._files.get(path)
        if why:
            return why
        for folder, why in self._dirs:
            if path == folder or path.startswith(folder + "/"):
                return why
        return None
