"""``python -m e2e.mock_llm``: the mock LLM as a separate process (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from e2e.mock_llm import MockLLM, Reply, Text, reply_from_json


def _load_script(path: str) -> tuple[list[Reply], Reply | None, bool]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, list):
        data = {"replies": data}
    replies = [reply_from_json(item) for item in data.get("replies", [])]
    default = reply_from_json(data["default"]) if data.get("default") else None
    return replies, default, bool(data.get("repeat_last", False))


def _write_atomically(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)  # a poller never sees a half-written port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.mock_llm", description="A local mock of an OpenAI-compatible chat API.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--script", help="JSON file: a list of replies or {replies, default, repeat_last}")
    parser.add_argument("--log", help="append every request to this JSONL file")
    parser.add_argument("--default-text", help="answer this text when the queue is empty (default: echo)")
    parser.add_argument("--repeat-last", action="store_true")
    parser.add_argument("--lenient", action="store_true", help="accept message lists OpenAI or llama.cpp reject")
    parser.add_argument("--no-usage", action="store_true", help="never send usage (like llama.cpp's server)")
    args = parser.parse_args(argv)

    replies, default, repeat_last = _load_script(args.script) if args.script else ([], None, False)
    if args.default_text is not None:
        default = Text(args.default_text)
    mock = MockLLM(
        default=default, repeat_last=repeat_last or args.repeat_last, strict=not args.lenient,
        log_path=args.log, port=args.port, usage=not args.no_usage,
    )
    mock.enqueue(*replies)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    mock.start()
    if args.port_file:
        _write_atomically(args.port_file, f"{mock.port}\n")
    print(f"mock LLM listening on {mock.url}", file=sys.stderr, flush=True)
    try:
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    mock.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
