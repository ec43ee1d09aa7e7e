"""Programs that run another command: what they run is what a rule judges.

`nice -n 5 rm x`, `timeout 10 rm x`, `flock lock rm x`, `busybox rm x`, `env -S 'rm x'`: the inner
command is judged as if it stood alone (the wrapper needs no rule of its own). `sudo rm x`,
`chroot / rm x`, `su -c 'rm x'`, `ssh host rm x` run it as someone else or elsewhere: the whole
line needs its own rule, and a deny or ask about the inner command still holds. `watch`,
`parallel`, `script -c`, `flock -c`, `su -c`, `trap` and `alias` take a shell line: it is parsed
like the line itself.

Each wrapper lists its options (those taking a value apart from those taking none): an option
it does not know might take the next word, so the command it wraps is not known, and the line
asks (a deny about any word after it still holds: tmg.permissions.engine).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Wrapper:
    valued: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    skip: int = 0  # positional words before the command (timeout's duration, flock's file, chroot's root)
    script: frozenset[str] = frozenset()  # options whose value is a shell line it runs (`su -c`)
    joined: bool = False  # it runs its words joined into one shell line (`watch`, `parallel`)
    elsewhere: bool = False  # as someone else, or elsewhere: its own rule, and the inner judged for deny/ask
    prints: frozenset[str] = frozenset()  # options with which it runs nothing (`command -v`)


@dataclass(frozen=True)
class Through:
    argv: tuple[tuple[str, ...], tuple[bool, ...]] | None = None  # the command it runs directly
    scripts: tuple[str, ...] = ()  # shell lines it runs
    elsewhere: bool = False
    chdir: str | None = None  # where the command runs (`env -C dir`)
    problem: str | None = None
    sets: tuple[str, ...] = ()  # environment variables it sets for the command (`env NAME=value`)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SU = Wrapper(valued=_set("-s --shell -g --group -G --supp-group -w --whitelist-environment -u --user"),
              flags=_set("- -l --login -m -p --preserve-environment -P --pty -f --fast"),
              script=_set("-c --command --session-command"), elsewhere=True)
_SUDO = Wrapper(valued=_set("-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t "
                            "--type -T --command-timeout -U --other-user"),
                flags=_set("-A --askpass -b --background -E --preserve-env -H --set-home -K --remove-timestamp -k "
                           "--reset-timestamp -n --non-interactive -P --preserve-groups -S --stdin -N --no-update "
                           "-i --login -s --shell"),
                elsewhere=True, prints=_set("-l --list -v --validate -V --version -e --edit"))
WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(valued=_set("-u --unset -C --chdir -S --split-string"),
                   flags=_set("-i --ignore-environment -0 --null -v --debug -")),
    "nice": Wrapper(valued=_set("-n --adjustment")),
    "nohup": Wrapper(),
    "command": Wrapper(flags=_set("-p"), prints=_set("-v -V")),
    "builtin": Wrapper(),
    "exec": Wrapper(valued=_set("-a"), flags=_set("-c -l")),
    "stdbuf": Wrapper(valued=_set("-i --input -o --output -e --error")),
    "setsid": Wrapper(flags=_set("-c --ctty -f --fork -w --wait")),
    "ionice": Wrapper(valued=_set("-c --class -n --classdata -p --pid -P --pgid -u --uid"), flags=_set("-t --ignore")),
    "timeout": Wrapper(valued=_set("-s --signal -k --kill-after"), flags=_set("--preserve-status --foreground -v "
                                                                              "--verbose"), skip=1),
    "xargs": Wrapper(valued=_set("-I -i -n -L -l -P -d -E -e -s -a --arg-file --delimiter --max-args --max-lines "
                                 "--max-procs --replace --max-chars --eof --process-slot-var"),
                     flags=_set("-0 -r -t -p -x -o --null --no-run-if-empty --verbose --interactive --open-tty "
                                "--exit")),
    "taskset": Wrapper(flags=_set("-a --all-tasks -c --cpu-list"), skip=1, prints=_set("-p --pid")),
    "chrt": Wrapper(valued=_set("-T --sched-runtime -P --sched-period -D --sched-deadline"),
                    flags=_set("-b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr -R --reset-on-fork "
                               "-a --all-tasks -v --verbose"), skip=1, prints=_set("-p --pid -m --max")),
    "flock": Wrapper(valued=_set("-w --timeout -E --conflict-exit-code"),
                     flags=_set("-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F "
                                "--no-fork --verbose"), skip=1, script=_set("-c --command")),
    "chroot": Wrapper(valued=_set("--userspec --groups"), flags=_set("--skip-chdir"), skip=1, elsewhere=True),
    "unshare": Wrapper(valued=_set("-S --setuid -G --setgid -w --wd -R --root --propagation"),
                       flags=_set("-m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup -T --time -f "
                                  "--fork -r --map-root-user -c --map-current-user --mount-proc --kill-child "
                                  "--keep-caps")),
    "nsenter": Wrapper(valued=_set("-t --target -S --setuid -G --setgid -w --wd -R --root"),
                       flags=_set("-a --all -m -u -i -n -p -U -C -T -r -F --no-fork --preserve-credentials"),
                       elsewhere=True),
    "su": _SU,
    "runuser": _SU,
    "sudo": _SUDO,
    "doas": Wrapper(valued=_set("-u -C"), flags=_set("-n -s"), elsewhere=True, prints=_set("-L")),
    "pkexec": Wrapper(valued=_set("--user"), flags=_set("--disable-internal-agent --keep-cwd"), elsewhere=True),
    "sg": Wrapper(skip=1, joined=True, script=_set("-c"), elsewhere=True),
    "script": Wrapper(valued=_set("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m "
                                  "--logging-format"),
                      flags=_set("-a --append -e --return -f --flush -q --quiet"), script=_set("-c --command")),
    "watch": Wrapper(valued=_set("-n --interval -q --equexit"),
                     flags=_set("-b --beep -e --errexit -g --chgexit -c --color -C --no-color -t --no-title -w "
                                "--no-wrap -p --precise -d --differences -x --exec"), joined=True),
    "parallel": Wrapper(valued=_set("-j --jobs -S --sshlogin --colsep -d --delimiter -I --results --joblog -N -n "
                                    "--max-args -L --timeout --delay --retries --env --workdir --wd -E --halt"),
                        flags=_set("-k --keep-order -q --quote -0 --null --dry-run -v --eta --progress --bar --tag "
                                   "--line-buffer -u --ungroup --group -X -m --pipe --xargs --no-notice --will-cite"),
                        joined=True),
    "busybox": Wrapper(),
    "toybox": Wrapper(),
    "strace": Wrapper(valued=_set("-o -e -p -s -u -E -a -b -I -O -S -P -X"),
                      flags=_set("-f -ff -c -C -d -D -F -i -k -q -qq -r -t -tt -ttt -T -v -w -x -xx -y -yy -z -Z")),
    "ltrace": Wrapper(valued=_set("-o -e -p -s -u -a -A -D -F -l -n"), flags=_set("-f -c -C -i -L -r -S -t -tt -ttt -T")),
    "valgrind": Wrapper(flags=_set("-q --quiet -v --verbose")),  # its options come as --name=value
    "systemd-run": Wrapper(valued=_set("-u --unit -p --property --description --slice -E --setenv -M --machine -H "
                                       "--host --uid --gid --nice --working-directory"),
                           flags=_set("--user --system --scope -t --pty -P --pipe -q --quiet --wait -G --collect -r "
                                      "--remain-after-exit --no-block --no-ask-password -S --shell"), elsewhere=True),
    "dbus-run-session": Wrapper(),
    "xvfb-run": Wrapper(valued=_set("-n --server-num -s --server-args -f --auth-file -e --error-file -p "
                                    "--xauth-protocol"), flags=_set("-a --auto-servernum")),
    "faketime": Wrapper(valued=_set("-f"), flags=_set("-m --exclude-monotonic"), skip=1),
    "fakeroot": Wrapper(valued=_set("-l --lib -s -i --faked"), flags=_set("-u --unknown-is-real")),
    "proxychains": Wrapper(valued=_set("-f"), flags=_set("-q")),
    "proxychains4": Wrapper(valued=_set("-f"), flags=_set("-q")),
    "torsocks": Wrapper(valued=_set("-u -p -a -P"), flags=_set("-i --isolate -q --quiet")),
    "firejail": Wrapper(flags=_set("--quiet --noprofile --private --net=none")),  # the rest as --name=value
    "eatmydata": Wrapper(),
    "nocache": Wrapper(),
    "catchsegv": Wrapper(),
    "entr": Wrapper(flags=_set("-a -c -cc -d -n -p -r -z"), script=_set("-s")),
    "ssh": Wrapper(valued=_set("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B"),
                   flags=_set("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -vv -vvv -X -x -Y -y"),
                   skip=1, joined=True, elsewhere=True),
}


def look_through(words: tuple[str, ...], literal: tuple[bool, ...]) -> Through | None:
    """What the wrapper `words[0]` runs, or None when it is no wrapper tmg knows."""
    name = words[0].rsplit("/", 1)[-1]
    wrapper = WRAPPERS.get(name)
    if wrapper is None:
        return None
    scripts: list[str] = []
    sets: list[str] = []
    chdir = None
    shell = False  # sudo -s CMD: the command goes to a shell's -c
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if name == "env" and "=" in word and not word.startswith("-"):
            sets.append(word.split("=", 1)[0])  # env NAME=value cmd
            i += 1
            continue
        if not word.startswith("-") or (word == "-" and "-" not in wrapper.flags):
            break
        option, value, width = _option(words, i, wrapper)
        if option is None:
            return Through(problem=f"{name} has an option tmg cannot read ({word})", elsewhere=wrapper.elsewhere)
        if option in wrapper.prints:
            return Through()  # `command -v rm`, `sudo -l`: it runs nothing
        if option in wrapper.script or (name == "env" and option in ("-S", "--split-string")):
            if value is None or not literal[min(i + width - 1, len(words) - 1)]:
                return Through(problem=f"{name} {option} runs a command tmg cannot read", elsewhere=wrapper.elsewhere)
            if name == "env":
                return _split_string(value, words[i + width:], literal[i + width:], chdir)
            scripts.append(value)
        chdir = value if name == "env" and option in ("-C", "--chdir") else chdir
        shell = shell or (name == "sudo" and option in ("-s", "--shell", "-i", "--login"))
        i += width
    if name in ("su", "runuser"):
        return _su(words, literal, i, scripts, wrapper)
    i += wrapper.skip
    while i + 1 < len(words) and words[i] in wrapper.script:  # flock FILE -c CMD: after the positional word
        if not literal[i + 1]:
            return Through(problem=f"{name} {words[i]} runs a command tmg cannot read", elsewhere=wrapper.elsewhere)
        scripts.append(words[i + 1])
        i += 2
    rest, rest_literal = words[i:], literal[i:]
    if (wrapper.joined or shell) and rest:
        if not all(rest_literal):
            return Through(problem=f"{name} runs a command built from expansions", elsewhere=wrapper.elsewhere)
        if name == "parallel":
            return _parallel(rest)
        if name == "watch" and ("-x" in words[1:i] or "--exec" in words[1:i]):
            return Through(argv=(rest, rest_literal))
        return Through(scripts=(*scripts, " ".join(rest)), elsewhere=wrapper.elsewhere)
    return Through(argv=(rest, rest_literal) if rest else None, scripts=tuple(scripts), elsewhere=wrapper.elsewhere,
                   chdir=chdir, sets=tuple(sets))


def _option(words: tuple[str, ...], i: int, wrapper: Wrapper) -> tuple[str | None, str | None, int]:
    """(the option at `i`, its value, how many words it spans); option None when unknown."""
    word = words[i]
    if word in wrapper.valued or word in wrapper.script:
        return word, (words[i + 1] if i + 1 < len(words) else None), 2
    if word in wrapper.flags or word in wrapper.prints:
        return word, None, 1
    if word.startswith("--") and "=" in word:
        option, value = word.split("=", 1)
        return option, value, 1
    if not word.startswith("--") and len(word) > 2 and (word[:2] in wrapper.valued or word[:2] in wrapper.script):
        return word[:2], word[2:], 1  # -n5
    if word[1:].isdigit():
        return word, None, 1  # nice -5
    if not word.startswith("--") and len(word) > 2 and all(f"-{c}" in wrapper.flags for c in word[1:-1]):
        last = f"-{word[-1]}"
        if last in wrapper.flags:
            return word, None, 1  # -fq: flags together
        if last in wrapper.valued or last in wrapper.script:
            return last, (words[i + 1] if i + 1 < len(words) else None), 2  # -qc CMD
    return None, None, 1


def _split_string(value: str, rest: tuple[str, ...], rest_literal: tuple[bool, ...], chdir: str | None) -> Through:
    """`env -S 'rm -rf x' y`: the string split into words, then the rest."""
    try:
        split = tuple(shlex.split(value))
    except ValueError:
        return Through(problem="env -S splits a string tmg cannot read")
    if not split:
        return Through()
    words = split + rest
    return Through(argv=(words, (True,) * len(split) + rest_literal), chdir=chdir)


def _su(words: tuple[str, ...], literal: tuple[bool, ...], i: int, scripts: list[str], wrapper: Wrapper) -> Through:
    """`su [options] [-] [user [args]]`, with `-c` anywhere (`su root -c 'rm x'`)."""
    j = i
    while j < len(words):
        if words[j] in wrapper.script and j + 1 < len(words):
            if not literal[j + 1]:
                return Through(problem="su -c runs a command tmg cannot read", elsewhere=True)
            scripts.append(words[j + 1])
            j += 2
            continue
        if words[j] == "-u" and words[0].endswith("runuser") and j + 1 < len(words):
            rest = words[j + 2:]
            start = 1 if rest and rest[0] == "--" else 0
            return Through(argv=(rest[start:], literal[j + 2 + start:]) if rest[start:] else None,
                           scripts=tuple(scripts), elsewhere=True)
        j += 1
    positional = [w for w in words[i:] if not w.startswith("-")]
    if not scripts and len(positional) > 1:  # `su user script.sh`: arguments for the user's shell
        return Through(problem="su passes arguments to a shell tmg cannot read", elsewhere=True)
    return Through(scripts=tuple(scripts), elsewhere=True)


def _parallel(rest: tuple[str, ...]) -> Through:
    """`parallel CMD ::: args`, or `parallel ::: 'cmd one' 'cmd two'` (the arguments are commands)."""
    marks = {":::", "::::", ":::+", "::::+"}
    cut = next((k for k, w in enumerate(rest) if w in marks), len(rest))
    command, args = rest[:cut], rest[cut + 1:]
    if rest[cut:cut + 1] == ("::::",) or rest[cut:cut + 1] == ("::::+",):
        return Through(problem="parallel reads its commands or arguments from a file tmg cannot read")
    if command:
        return Through(scripts=(" ".join(command),))
    return Through(scripts=tuple(a for a in args if a not in marks))

