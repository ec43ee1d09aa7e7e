"""Reading a config file without trusting it: only a regular file, a bounded read, UTF-8 text,
and a YAML tree whose aliases cannot expand without bound.

Used at start and by every hot reload, so nothing here may block: a FIFO at the config path is
opened non-blocking and refused (a plain open would wait forever for a writer), and a huge or
endless file (``/dev/zero`` behind a symlink) is cut off after ``MAX_CONFIG_BYTES``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from tmg.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20  # a config is a page of YAML; anything near this is the wrong file
# Flow collections (`[`, `{`) open at once: PyYAML's scanner costs O(depth) per token, so a
# megabyte of `[` would take hours; a config needs five levels.
MAX_FLOW_DEPTH = 64
# Values the parsed tree may hold, counting each alias use as a copy: far above any real config,
# far below what an alias bomb (a few lines expanding to 10^9 values) reaches.
MAX_CONFIG_VALUES = 100_000

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def read_config_bytes(path: Path) -> bytes:
    """The file's bytes, read without blocking and without bound only up to the cap.

    Raises:
        ConfigError: not a regular file, unreadable, or larger than ``MAX_CONFIG_BYTES``.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ConfigError(_cannot_open(path, exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise ConfigError(f"config file {path} is {kind}, not a regular file; point the config at a YAML file")
        chunks, size = [], 0
        while size <= MAX_CONFIG_BYTES:
            chunk = os.read(fd, MAX_CONFIG_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or type(exc).__name__}; "
                          "check that it is a readable YAML file") from None
    finally:
        os.close(fd)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES // (1 << 20)} MB; "
                          "a config is a short YAML file: check that the path names it")
    return b"".join(chunks)


def _cannot_open(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"config file {path} is a symlink to {os.readlink(path)}, which does not exist; fix the link"
        return f"config file {path} does not exist; check the path"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot read config file {path}: permission denied; make it readable (chmod u+r)"
    return f"cannot read config file {path}: {exc.strerror or type(exc).__name__}; check the path"


def read_config_text(path: Path) -> str:
    """The file as text (see :func:`read_config_bytes`); bytes that are not UTF-8 are an error."""
    return decode_config(read_config_bytes(path), path)


def decode_config(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"config file {path} line {line}: not UTF-8 text; save the file as UTF-8") from None


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with flow nesting bounded (see ``MAX_FLOW_DEPTH``).

    Raises:
        yaml.YAMLError: as safe_load does, and for nesting past the bound (with its mark).
    """
    loader = _bounded_loader()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


_LOADER: Any = None


def _bounded_loader() -> Any:
    global _LOADER
    if _LOADER is None:
        import yaml

        class BoundedLoader(yaml.SafeLoader):
            def fetch_flow_collection_start(self, token_class: Any) -> None:
                if self.flow_level >= MAX_FLOW_DEPTH:
                    raise yaml.scanner.ScannerError(
                        None, None, f"values nested more than {MAX_FLOW_DEPTH} deep", self.get_mark())
                super().fetch_flow_collection_start(token_class)

        _LOADER = BoundedLoader
    return _LOADER


def check_tree_size(tree: Any, where: str) -> None:
    """Refuse a parsed YAML tree that expands to more than ``MAX_CONFIG_VALUES`` values.

    YAML aliases share one object per anchor, so the tree is small in memory; but anything that
    walks it (validation, error messages) walks every use. Counted once per shared object.

    Raises:
        ConfigError: an alias bomb, or nesting too deep to walk.
    """
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    key = ""  # the top-level key being walked, to name in the message

    def size(node: Any) -> int:
        if not isinstance(node, (list, dict)):
            return 1
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in visiting:
            return 1  # an alias loop: a finite object; validation says what is wrong with its key
        visiting.add(id(node))
        total = 1
        for child in (node.values() if isinstance(node, dict) else node):
            total += size(child)
            if total > MAX_CONFIG_VALUES:
                raise ConfigError(f"{where}: {key + ' has' if key else 'its'} YAML aliases that expand to more "
                                  f"than {MAX_CONFIG_VALUES} values (an alias bomb?); write the values out")
        visiting.discard(id(node))
        sizes[id(node)] = total
        return total

    try:
        if isinstance(tree, dict):
            total = 1
            for name, value in tree.items():
                key = str(name)[:40]
                total += size(value)
                if total > MAX_CONFIG_VALUES:
                    raise ConfigError(f"{where}: its YAML aliases expand to more than {MAX_CONFIG_VALUES} "
                                      "values (an alias bomb?); write the values out")
        else:
            size(tree)
    except RecursionError:
        raise ConfigError(f"{where}: {key or 'a value'} is nested too deeply; flatten the YAML") from None


def parse_yaml(text: str, path: Path) -> Any:
    """The file's YAML tree, its size bounded (:func:`check_tree_size`).

    Raises:
        ConfigError: the YAML does not parse, or holds what cannot be read (the line and the fix).
    """
    import yaml  # only paths that read a config pay for it

    try:
        tree = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        # The end of the stream is one line past the last: point at the last line instead.
        where = f" line {min(mark.line + 1, max(1, len(text.splitlines())))}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        if isinstance(exc, yaml.reader.ReaderError):  # a control character: no mark, a position
            where = f" line {text[: exc.position].count(chr(10)) + 1}"
            code = exc.character if isinstance(exc.character, int) else ord(exc.character or "\0")
            problem = f"the control character \\x{code:02x} is not allowed (remove it)"
        raise ConfigError(f"config file {path}{where}: {problem}; fix the YAML syntax there") from exc
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for a few odd inputs (deep nesting, bad timestamps).
        if isinstance(exc, RecursionError):
            what = "nested too deeply"
        elif "integer string conversion" in str(exc):
            what = "a number with thousands of digits"
        else:
            what = " ".join(str(exc).split())[:120]
        raise ConfigError(f"config file {path}: cannot read a value ({what or type(exc).__name__}); "
                          "fix the YAML there") from exc
    check_tree_size(tree, f"config file {path}")
    return tree


def _type_name(value: Any) -> str:
    return {type(None): "nothing", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


def require_mapping(raw: Any, where: str) -> None:
    """A config's top level is a mapping of keys; anything else is an error naming ``where``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the top level must be a mapping of KEY: value lines, not {_type_name(raw)}")
