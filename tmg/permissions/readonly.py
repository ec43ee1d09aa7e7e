"""Commands that only look: `git status`, `ls`, `cat README.md`, `wc -l`, `grep -n x src`.

In every mode such a command runs without a question, like a read_file call, when its words are
literal and every file it names lies inside the working folder and holds no secret (the engine
checks the paths: tmg.permissions.engine). The list follows Codex's `is_safe_command`: a
program counts only with options that neither write (`sort -o`, `tree -o`, `find -fprint`), run
something (`find -exec`, `rg --pre`, awk's system(), sed's `e`) nor change state (`date -s`,
`git branch -d`); anything else asks as before.
"""

from __future__ import annotations

from functools import lru_cache

from tmg.permissions.interpreters import NOTHING, inspect, sed_in_place, sed_scripts
from tmg.permissions.programs import runs_hidden_code, subcommand_at
from tmg.permissions.sed import read_sed


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Whatever their arguments (files to read, patterns, numbers).
_LOOKERS = _set(
    "cat head tail wc ls pwd echo printf true false cut nl paste rev seq stat tr uname id whoami which basename "
    "dirname realpath readlink du df diff cmp comm tac numfmt expr test [ printenv column fold fmt od hexdump strings "
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum jq type sleep locale uptime nproc whereis "
    "tty groups arch grep egrep fgrep zcat zgrep bzcat xzcat cd pushd popd : base32 ps pgrep free lsof")
# A search through folders prints what it finds in any file, .env included: it asks, as the
# grep tool (which skips secret files) is there for that.
_RECURSIVE = _set("-r -R --recursive --dereference-recursive -d --directories")
# Programs whose arguments are not files: the paths check skips them (`echo /etc` reads nothing).
NOT_FILES = _set("echo printf true false test [ seq expr sleep uname id whoami which type locale nproc tty groups "
                 "arch basename dirname numfmt : date hostname printenv command ps pgrep")
# Options (a word, or a word's start before `=` or an attached value) that make a looker do more.
_BUT_NOT = {
    "sort": _set("-o --output --compress-program"), "tree": _set("-o"), "base64": _set("-o --output"),
    "file": _set("-C --compile"), "date": _set("-s --set"), "yq": _set("-i --inplace"), "xxd": _set("-r --revert"),
    "find": _set("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls"),
}
_BARE_ONLY = _set("env hostname")  # with arguments they change or run something
_ONE_FILE = _set("uniq xxd")  # a second operand is where they write
_GIT_LOOKS = _set("status log diff show rev-parse ls-files ls-tree blame annotate describe shortlog cat-file rev-list "
                  "show-ref merge-base name-rev count-objects version whatchanged grep check-ignore check-attr "
                  "for-each-ref diff-tree diff-index diff-files show-branch")
_GIT_NOT = _set("--output -o --ext-diff --textconv --exec --paginate -p")  # -p: in diff-like ones, a patch is fine
_GIT_LIST_ONLY = {"branch": _set("--list -l --show-current -a --all -r --remotes -v -vv --verbose --contains "
                                 "--merged --no-merged --sort --format --points-at --no-color --color"),
                  "tag": _set("--list -l -n --contains --merged --no-merged --sort --format --points-at"),
                  "remote": _set("-v --verbose"), "stash": _set("list show"), "worktree": _set("list"),
                  "config": _set("--get --get-all --get-regexp --list -l --show-origin --show-scope --name-only "
                                 "--local --global --system --file -f")}


@lru_cache(maxsize=1024)
def looks_only(words: tuple[str, ...]) -> bool:
    """True when the command `words` (all literal) only reads and prints."""
    name = words[0].rsplit("/", 1)[-1] if "/" not in words[0] else ""  # ./ls is a program of the model's
    if not name:
        return False
    if name in _BARE_ONLY:
        return len(words) == 1
    if name == "command":
        return len(words) > 1 and words[1] in ("-v", "-V")
    if name == "git":
        return _git_looks(words)
    if name in ("sed", "gsed"):
        return _sed_looks(words)
    if name in ("awk", "gawk", "mawk", "nawk"):
        return inspect(words, (True,) * len(words)) is NOTHING and not any(w in ("-f", "--file") for w in words)
    if name in ("grep", "egrep", "fgrep", "zgrep") and any(_banned(w, _RECURSIVE, False) for w in words[1:]):
        return False
    if name == "find" or name in _LOOKERS or name in _BUT_NOT or name in _ONE_FILE:
        banned = _BUT_NOT.get(name, frozenset())
        if banned and any(_banned(w, banned, name == "find") for w in words[1:]):
            return False
        if name in _ONE_FILE and sum(1 for w in words[1:] if not w.startswith("-")) > 1:
            return False
        return True
    return False


def _banned(word: str, banned: frozenset[str], whole_words: bool) -> bool:
    """`word` is, or holds, one of the `banned` options: `--output=x`, `-o x`, `-uo x` (a cluster)."""
    if whole_words or word.startswith("--"):
        return word.split("=", 1)[0] in banned
    letters = {b[1] for b in banned if len(b) == 2}
    return word.startswith("-") and any(c in letters for c in word[1:])


def _sed_looks(words: tuple[str, ...]) -> bool:
    if sed_in_place(words):
        return False
    scripts = sed_scripts(words, (True,) * len(words))
    if not scripts:
        return False
    read = read_sed("\n".join(scripts))
    return read is not None and not (read.runs or read.executes or read.writes or read.reads)


def _git_looks(words: tuple[str, ...]) -> bool:
    if runs_hidden_code(words):
        return False
    places, certain = subcommand_at(words)
    if not certain or len(places) != 1:
        return False
    at = places[0]
    sub, rest = words[at], words[at + 1:]
    if any(w.split("=", 1)[0] in ("-c", "--config-env", "--exec-path", "-p", "--paginate", "--git-dir",
                                  "--work-tree") for w in words[1:at]):
        return False
    if sub in _GIT_LOOKS:
        patch_ok = sub in ("log", "show", "diff", "diff-tree", "diff-index", "diff-files", "whatchanged")
        return not any(w.split("=", 1)[0] in _GIT_NOT and not (patch_ok and w == "-p") for w in rest)
    allowed = _GIT_LIST_ONLY.get(sub)
    if allowed is None:
        return False
    if sub in ("branch", "tag", "remote") and not rest:
        return True
    if sub in ("stash", "worktree"):
        return bool(rest) and rest[0] in allowed
    if sub == "config":
        return any(w.split("=", 1)[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l") for w in rest) and all(
            w.split("=", 1)[0] in allowed or not w.startswith("-") for w in rest)
    # branch/tag/remote: only listing options, and (for branch and tag lists) patterns after --list
    listing = any(w.split("=", 1)[0] in allowed for w in rest)
    positional = [w for w in rest if not w.startswith("-")]
    return listing and all(w.split("=", 1)[0] in allowed for w in rest if w.startswith("-")) and (
        not positional or any(w in ("--list", "-l") for w in rest))
