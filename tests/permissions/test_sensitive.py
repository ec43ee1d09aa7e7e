"""Files that hold secrets by nature are told apart, wherever the roots are."""

from __future__ import annotations

import os
from pathlib import Path

from tmg.permissions.sensitive import SensitivePaths


def test_secret_bearing_paths_are_named_with_a_reason(tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home), "TMG_HOME": str(tmp_path / "tmghome"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "TMG_CONFIG": str(tmp_path / "my-tmg.yaml")}
    secret = SensitivePaths(env)
    for path in ["/proc/self/environ", "/proc/1234/environ", "/etc/shadow", tmp_path / "proj" / ".env",
                 tmp_path / "proj" / ".env.local", home / ".ssh" / "id_ed25519", home / ".ssh" / "config",
                 home / ".aws" / "credentials", home / ".netrc", tmp_path / "certs" / "server.key",
                 tmp_path / "xdg" / "tmg" / "config.yaml", tmp_path / "tmghome" / "sessions" / "x.jsonl",
                 tmp_path / "my-tmg.yaml"]:
        assert secret.reason(path), path
    for path in ["/proc/self/status", "/etc/hostname", tmp_path / "proj" / "env.py", tmp_path / "proj" / "README.md",
                 home / "notes.txt", tmp_path / "xdg" / "other" / "config.yaml"]:
        assert secret.reason(path) is None, path


def test_a_symlink_to_a_secret_is_a_secret(tmp_path):
    (tmp_path / ".env").write_text("K=1")
    os.symlink(tmp_path / ".env", tmp_path / "readme.txt")
    assert SensitivePaths({"HOME": str(tmp_path)}).reason(Path(tmp_path / "readme.txt"))
