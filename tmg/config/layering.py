"""A project's config over the user's own. A project's ./tmg.yaml takes the place of the user's file
as the config, but not of the user's PERMISSIONS: its rules hold in every folder (merged with the
project's by the permission engine: deny beats ask beats allow, wherever a rule was written), and
its MODE unless the project sets one it may set."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from tmg.config.build import permissions_config
from tmg.config.discovery import UserFile, exists
from tmg.config.model import PermissionsConfig
from tmg.config.origins import key_lines, locate
from tmg.config.overrides import expand
from tmg.config.schema import SCHEMA, Findings, validate_block
from tmg.config.source import require_mapping
from tmg.errors import ConfigError


def user_rules(clean: dict[str, Any], origins: dict[str, str], user: UserFile, env: Mapping[str, str],
               trusted: bool) -> tuple[PermissionsConfig | None, list[str]]:
    """The user's own PERMISSIONS beside a project's validated tree ``clean`` (None when the user's
    file sets none), with the user's MODE taken into ``clean`` where it holds, and warnings."""
    found, warnings = _user_permissions(user, env)
    if found is None:
        return None, warnings
    block, path = found
    _take_user_mode(clean, origins, block.get("MODE"), path, trusted)
    return permissions_config(block, path), warnings


def _user_permissions(user: UserFile, env: Mapping[str, str]) -> tuple[tuple[dict[str, Any], Path] | None, list[str]]:
    """The validated PERMISSIONS block of the user's own config file and that file (None when it
    has none), and warnings. An unreadable or invalid block is an error, as it is for the user's
    file anywhere else: going on without the user's deny rules (a deny written once must not be
    bypassed by changing into a folder that has a tmg.yaml) is not safe.
    """
    path = user.path
    if not exists(path):
        return None, []
    text, raw = user.read()
    if raw is None:
        return None, []
    require_mapping(raw, f"config file {path} line 1")
    wanted = {k: v for k, v in raw.items() if str(k).upper() == "PERMISSIONS"}
    if not wanted:
        return None, []
    findings = Findings()
    clean = validate_block(expand(wanted, env), {"PERMISSIONS": SCHEMA["PERMISSIONS"]}, "", findings)
    if findings.errors:
        lines = key_lines(text)
        problems = [f"line {line}: {m}" if (line := locate(p, lines)) is not None else m
                    for m, p in zip(findings.errors, findings.error_paths)]
        raise ConfigError(f"invalid config in {path}: {'; '.join(problems)} (your PERMISSIONS apply in every "
                          "folder, a project's too); fix them there")
    if "PERMISSIONS" not in clean:
        return None, []
    return (clean["PERMISSIONS"], path), [f"{path}: {w}" for w in findings.warnings]


# The permission modes, each allowing less than the one before it.
_LOOSEST_FIRST = ("yolo", "accept-edits", "default", "plan", "read-only")


def _take_user_mode(clean: dict[str, Any], origins: dict[str, str], theirs: str | None, path: Path,
                    trusted: bool) -> None:
    """The user's PERMISSIONS.MODE holds in a project unless the project sets one: a trusted
    project (or a TMG_PERMISSIONS_MODE variable) wins, an untrusted one only when it allows less.
    ``--permissions`` beats them all (the engine)."""
    if theirs is None:
        return
    block = clean.setdefault("PERMISSIONS", {})
    own = block.get("MODE")
    if own is not None and (trusted or origins.get("PERMISSIONS.MODE", "").startswith("env ")
                            or _LOOSEST_FIRST.index(own) >= _LOOSEST_FIRST.index(theirs)):
        return
    block["MODE"] = theirs
    origins["PERMISSIONS.MODE"] = f"file {path}"
