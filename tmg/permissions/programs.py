"""What tmg knows of programs' command lines, so a rule means the same wherever its words stand.

Programs with subcommands take global options before the subcommand (`git -C . push`,
`kubectl -n ns delete`, `npm --prefix . publish`): a rule `git push` is about the subcommand,
so the options in front are skipped by knowing which of them take a value. An option tmg does
not know might take the next word, so both readings are kept: a deny or ask matches if either
does, an allow only when the reading is certain.

Some options make a program run code the rest of the line does not show (`git -c
alias.x='!rm x'`, `cargo --config`, `apt-get -o ...Pre-Invoke=...`, `kubectl --kubeconfig` with an
exec plugin), as does a git subcommand that is not built in (an alias) or one that runs a
command (`rebase --exec`, `bisect run`): such a line needs a rule naming it whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Grammar:
    valued: frozenset[str]  # global options that take the next word as their value
    flags: frozenset[str] = frozenset()  # global options that take none
    code: frozenset[str] = frozenset()  # global options that can make it run other code
    builtin: frozenset[str] | None = None  # its own subcommands, when any other may be an alias that runs anything
    aliases: dict[str, str] = field(default_factory=dict)  # another name of a subcommand: `npm i` is `npm install`
    # subcommand -> its options that run a command (`git rebase --exec`), or "*" when the subcommand itself does
    running: dict[str, frozenset[str]] = field(default_factory=dict)
    runners: frozenset[str] = frozenset()  # subcommands that run their arguments as a command (`docker exec`)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GIT_BUILTIN = _set(
    "add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore "
    "check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit "
    "commit-graph commit-tree config count-objects credential describe diagnose diff diff-files diff-index "
    "diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref "
    "for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help hook index-pack init "
    "instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base "
    "merge-file merge-index merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects "
    "pack-refs patch-id prune prune-packed pull push range-diff read-tree rebase reflog remote repack replace "
    "request-pull rerere reset restore rev-list rev-parse revert rm send-email shortlog show show-branch "
    "show-index show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag "
    "unpack-file unpack-objects update-index update-ref update-server-info var verify-commit verify-pack "
    "verify-tag version whatchanged worktree write-tree")

GRAMMARS: dict[str, Grammar] = {
    "git": Grammar(
        valued=_set("-C -c --git-dir --work-tree --namespace --super-prefix --config-env --list-cmds --attr-source"),
        flags=_set("-p --paginate -P --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
                   "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice -h --help --version "
                   "--html-path --man-path --info-path --exec-path"),
        code=_set("-c --config-env --exec-path="),  # bare --exec-path only prints where it is
        builtin=_GIT_BUILTIN,
        running={"rebase": _set("--exec -x"), "bisect": _set("run"), "submodule": _set("foreach"),
                 "filter-branch": frozenset({"*"}), "fetch": _set("--upload-pack"), "pull": _set("--upload-pack"),
                 "clone": _set("--upload-pack -u"), "ls-remote": _set("--upload-pack"),
                 "push": _set("--receive-pack --exec"), "archive": _set("--exec"), "difftool": _set("-x --extcmd"),
                 "config": frozenset({"*"})},  # it can define aliases and hooks' paths
    ),
    "docker": Grammar(
        valued=_set("--config -c --context -H --host -l --log-level --tlscacert --tlscert --tlskey"),
        flags=_set("-D --debug --tls --tlsverify -v --version"),
        runners=_set("exec run"),
    ),
    "kubectl": Grammar(
        valued=_set("-n --namespace --context --cluster --user --kubeconfig -s --server --token --as --as-group "
                    "--as-uid --certificate-authority --client-certificate --client-key --request-timeout "
                    "--cache-dir -v --v --log-file --profile --tls-server-name --password --username"),
        flags=_set("--insecure-skip-tls-verify --match-server-version --warnings-as-errors"),
        code=_set("--kubeconfig"),  # a kubeconfig's exec credential plugin runs a command
        runners=_set("exec debug"),
    ),
    "helm": Grammar(
        valued=_set("--kube-context -n --namespace --kubeconfig --registry-config --repository-config "
                    "--repository-cache --kube-token --kube-apiserver --kube-as-user --kube-as-group "
                    "--kube-ca-file --burst-limit --qps"),
        flags=_set("--debug --kube-insecure-skip-tls-verify"),
        code=_set("--kubeconfig"),
        builtin=_set("completion create dependency env get help history install lint list package plugin pull push "
                     "registry repo rollback search show status template test uninstall upgrade verify version"),
    ),
    "npm": Grammar(
        valued=_set("--prefix -C --userconfig --globalconfig --registry --cache -w --workspace --loglevel --scope"),
        flags=_set("-g --global -s --silent -q --quiet -d -dd -ddd --verbose --json --no-color -ws --workspaces "
                   "--offline --prefer-offline --prefer-online -y --yes -f --force --include-workspace-root"),
        code=_set("--script-shell --node-options --userconfig --globalconfig"),
        aliases={"i": "install", "in": "install", "add": "install", "isntall": "install", "t": "test", "tst": "test",
                 "run-script": "run", "rum": "run", "urn": "run", "rm": "uninstall", "r": "uninstall",
                 "un": "uninstall", "remove": "uninstall", "x": "exec", "ci": "clean-install", "it": "install-test",
                 "up": "update", "upgrade": "update", "ln": "link", "c": "config", "s": "search"},
        runners=_set("exec"),
    ),
    "pnpm": Grammar(
        valued=_set("-C --dir --filter -F --workspace-dir --reporter --loglevel"),
        flags=_set("-r --recursive -w --workspace-root -s --silent --color --no-color --aggregate-output"),
        aliases={"i": "install", "add": "add", "rm": "remove", "un": "remove", "uninstall": "remove",
                 "up": "update", "t": "test", "run-script": "run", "x": "exec"},
        runners=_set("exec dlx"),
    ),
    "yarn": Grammar(
        valued=_set("--cwd --modules-folder --cache-folder --mutex --network-timeout"),
        flags=_set("-s --silent --verbose --offline --prefer-offline --frozen-lockfile --no-progress --json"),
        runners=_set("exec dlx"),
    ),
    "cargo": Grammar(
        valued=_set("-C --config -Z --color --explain"),
        flags=_set("-v -vv --verbose -q --quiet --frozen --locked --offline --list -V --version"),
        code=_set("--config"),  # build.rustc-wrapper and friends name programs it runs
        runners=_set("run"),
    ),
    "go": Grammar(valued=_set("-C"), running={"test": _set("-exec -toolexec"), "build": _set("-toolexec"),
                                              "run": _set("-exec -toolexec"), "vet": _set("-vettool")},
                  runners=_set("run generate")),
    "pip": Grammar(
        valued=_set("--python --cache-dir --log --proxy --retries --timeout --exists-action --trusted-host --cert "
                    "--client-cert --use-feature --use-deprecated --src --keyring-provider"),
        flags=_set("-v --verbose -q --quiet --isolated --no-input --no-color --no-cache-dir "
                   "--disable-pip-version-check --require-virtualenv --no-python-version-warning --debug -V --version"),
    ),
    "uv": Grammar(
        valued=_set("--directory --project --cache-dir --config-file --color --python-preference"),
        flags=_set("-q --quiet -v --verbose --offline --no-cache -n --native-tls --no-progress --preview "
                   "--no-config --no-python-downloads"),
        code=_set("--config-file"),
        runners=_set("run tool"),
    ),
    "poetry": Grammar(valued=_set("-C --directory -P --project"),
                      flags=_set("-q --quiet -v -vv -vvv --verbose -n --no-interaction --no-plugins --no-cache --ansi "
                                 "--no-ansi"), runners=_set("run")),
    "systemctl": Grammar(
        valued=_set("-H --host -M --machine -t --type -p --property -s --signal --state --root -o --output -n "
                    "--lines --kill-whom --job-mode --what --timestamp --image --drop-in"),
        flags=_set("--user --system --global -q --quiet --no-pager --no-block --now -f --force -a --all -l --full "
                   "--no-legend --no-ask-password -r --recursive --failed --runtime --no-reload --no-wall"),
    ),
    "terraform": Grammar(valued=frozenset(), flags=_set("-help -version")),  # -chdir=DIR comes attached
    "gh": Grammar(
        valued=_set("-R --repo --hostname"), flags=_set("--help --version"),
        builtin=_set("auth browse codespace gist issue org pr project release repo cache run workflow alias api "
                     "attestation completion config extension gpg-key label ruleset search secret ssh-key status "
                     "variable copilot preview help"),
        running={"alias": frozenset({"*"}), "extension": frozenset({"*"})},
    ),
    "apt-get": Grammar(valued=_set("-o --option -c --config-file -t --target-release"),
                       flags=_set("-y --yes --assume-yes -q -qq --quiet -s --simulate --dry-run --no-install-recommends "
                                  "-f --fix-broken -d --download-only --reinstall --purge"),
                       code=_set("-o --option -c --config-file")),  # DPkg::Pre-Invoke runs a command
    "make": Grammar(valued=_set("-C --directory -f --file --makefile -I --include-dir -o --old-file -W --what-if "
                                "--new-file --assume-new -l --load-average -O --output-sync"),
                    flags=_set("-B --always-make -d -e --environment-overrides -i --ignore-errors -k --keep-going -n "
                               "--just-print --dry-run --recon -q --question -r -R -s --silent --quiet -S -t --touch "
                               "-w --print-directory --no-print-directory --trace -L"),  # -j [N]: either way
                    code=_set("--eval -E")),
    "dotnet": Grammar(valued=frozenset(), flags=_set("-d --diagnostics -h --help --info --version")),
    "brew": Grammar(valued=frozenset(), flags=_set("-v --verbose -d --debug -q --quiet")),
}
for _twin, _of in (("podman", "docker"), ("nerdctl", "docker"), ("pip3", "pip"), ("apt", "apt-get"),
                   ("gmake", "make"), ("oc", "kubectl")):
    GRAMMARS[_twin] = GRAMMARS[_of]
_MAX_UNKNOWN = 3  # options tmg does not know, before a subcommand, read both ways; more are not followed


def grammar_of(program: str) -> Grammar | None:
    return GRAMMARS.get(program.rsplit("/", 1)[-1])


@lru_cache(maxsize=2048)
def subcommand_at(words: tuple[str, ...]) -> tuple[tuple[int, ...], bool]:
    """Where the subcommand of `words` may stand (indexes), and whether that is certain. No
    grammar: the word after the program, as written. `git --version`: none."""
    grammar = grammar_of(words[0]) if words else None
    if grammar is None:
        return ((1,) if len(words) > 1 else ()), True
    found: set[int] = set()
    certain = _scan(words, 1, grammar, found, 0)
    return tuple(sorted(found)), certain and len(found) <= 1


def _scan(words: tuple[str, ...], i: int, grammar: Grammar, found: set[int], unknown: int) -> bool:
    """Collect the subcommand's possible places from `i` on; False when a reading was given up."""
    while i < len(words):
        word = words[i]
        if word == "--":
            if i + 1 < len(words):
                found.add(i + 1)
            return True
        if not word.startswith(("-", "+")) or word in ("-", "+"):
            found.add(i)
            return True
        if word.startswith("+"):  # cargo +nightly build: a toolchain, not an option
            i += 1
        elif word in grammar.valued:
            i += 2
        elif word in grammar.flags or _attached(word, grammar):
            i += 1
        elif unknown >= _MAX_UNKNOWN:
            return False
        else:  # an option tmg does not know: it may take the next word or not
            other = _scan(words, i + 2, grammar, found, unknown + 1)
            return _scan(words, i + 1, grammar, found, unknown + 1) and other
    return True


def _attached(word: str, grammar: Grammar) -> bool:
    """`--opt=value`, `-Cdir`: an option and its value in one word."""
    if "=" in word:
        return True
    return not word.startswith("--") and len(word) > 2 and word[:2] in grammar.valued


def readings(words: tuple[str, ...]) -> tuple[list[tuple[int, ...]], bool]:
    """The ways to read `words` as [program, subcommand, the rest], as indexes into `words`
    (global options left out), and whether the reading is certain. One reading when the options
    are all known, more when one might take a value; none when no subcommand is named."""
    if grammar_of(words[0]) is None:
        return [tuple(range(len(words)))], True
    places, certain = subcommand_at(words)
    return [(0, *range(at, len(words))) for at in places], certain


def subcommand_name(program: str, word: str) -> str:
    """A subcommand's own name for another one (`npm i` is `npm install`)."""
    grammar = grammar_of(program)
    return grammar.aliases.get(word, word) if grammar is not None else word


def runs_hidden_code(words: tuple[str, ...]) -> str | None:
    """Why `words` may run code they do not show (then only a rule naming the whole line allows
    it), or None."""
    grammar = grammar_of(words[0]) if words else None
    if grammar is None:
        return None
    places, certain = subcommand_at(words)
    end = min(places) if places else len(words)
    name = words[0].rsplit("/", 1)[-1]
    for word in words[1:end]:
        option = word.split("=", 1)[0]
        if option in grammar.code or ("=" in word and option + "=" in grammar.code):
            return f"{name} {option} can make it run other commands"
        if not word.startswith("--") and len(word) > 2 and word[:2] in grammar.code:  # -ccore.pager=x
            return f"{name} {word[:2]} can make it run other commands"
    for at in places:
        sub = grammar.aliases.get(words[at], words[at])
        if grammar.builtin is not None and sub not in grammar.builtin:
            return f"{name} {sub} is not one of {name}'s own commands (an alias or a plugin runs anything)"
        options = grammar.running.get(sub, frozenset())
        if "*" in options:
            return f"{name} {sub} can run or define other commands"
        rest = words[at + 1:]
        hit = next((w for w in rest if w.split("=", 1)[0] in options), None)
        if hit is not None:
            return f"{name} {sub} {hit.split('=', 1)[0]} runs a command"
    if not certain and not places:
        return f"{name} has options tmg cannot read"
    return None


def runs_arguments(words: tuple[str, ...]) -> bool:
    """True when a subcommand runs its arguments as a command (`docker exec c rm x`, `uv run rm`)."""
    grammar = grammar_of(words[0]) if words else None
    if grammar is None or not grammar.runners:
        return False
    places, _ = subcommand_at(words)
    return any(grammar.aliases.get(words[at], words[at]) in grammar.runners for at in places)


# Programs whose arguments are never a command they run (so a word like `rm` among them is data:
# `grep rm notes`, `git rm x`). Any other program might be a wrapper tmg does not know, and a
# deny or ask about a word after it holds (`mywrap rm -rf x`).
_DATA_ARGUMENTS = _set(
    "cat head tail wc ls pwd echo printf true false cut nl paste rev seq stat tr uname id whoami which basename "
    "dirname realpath readlink file du df diff cmp comm tac numfmt expr test [ printenv column fold fmt od hexdump "
    "xxd strings md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum jq yq type sleep locale uptime "
    "nproc whereis tty groups arch hostname date sort uniq tree grep egrep fgrep rg ag ack zcat zgrep bzcat xzcat "
    "base64 base32 cd pushd popd rm rmdir unlink mv cp ln mkdir touch chmod chown chgrp dd truncate shred install tee "
    "curl wget zip unzip gzip gunzip xz unxz bzip2 bunzip2 zstd 7z patch kill pkill killall pgrep ps top free lsof "
    "mount umount less more man info awk gawk mawk nawk sed gsed find tar gtar bsdtar rsync scp make gmake go cargo "
    "rustc rustup npm pnpm yarn node nodejs deno bun pip pip3 uv poetry pipx pytest tox nox black ruff mypy pyright "
    "flake8 pylint isort eslint prettier tsc jest vitest mocha docker podman nerdctl kubectl oc helm terraform gh "
    "systemctl journalctl apt apt-get dpkg brew dotnet mvn gradle java javac gcc g++ clang clang++ cc c++ ld ar nm "
    "objdump strip cmake ninja meson git git-lfs svn hg sqlite3 psql mysql redis-cli openssl ssh-keygen gpg "
    "ping dig nslookup host traceroute ip ifconfig ss netstat export unset set shopt source . read wait "
    "history unalias local declare typeset readonly return exit break continue shift getopts hash umask ulimit "
    "jobs fg bg disown times trap alias : perl ruby php lua luajit Rscript julia go gofmt zig swift swiftc kotlin "
    "python python3 python2 pypy pypy3")


def known(program: str) -> bool:
    """True when tmg knows `program` does not run its arguments as a command."""
    return program in _DATA_ARGUMENTS or program in GRAMMARS or program.startswith("python")
