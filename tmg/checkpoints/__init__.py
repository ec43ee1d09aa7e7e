"""Checkpoints and rewind: what each prompt changed, kept so that `tmg rewind` and `/rewind` can
take it back (files, the exchanges the model is sent, and what memory learned from them).

- `log`: the session's checkpoint record (copies of files before a prompt changed them, the shell
  commands it ran, the memory it wrote), under TMG_HOME in the session's folder.
- `tools`: the file and shell tools, wrapped so that every change is kept before it is made.
- `rewind`: which prompts to take back, what that restores, and doing it.
"""

# The log's place in a session's folder; here, so that `tmg -t` can look for it without the log's code.
CHECKPOINTS_DIR = "checkpoints"
LOG_FILE = "log.jsonl"
