"""``vqabench``: one command line for researchers and maintainers.

Each command lives in the module of the same name under :mod:`builders.cli` (``vqabench leaderboard`` in
``builders/cli/leaderboard.py``) and exposes ``register(subparsers)``; it sets ``func`` on its parser,
called with the parsed namespace. A benchmark's command (``vqabench bqa``) comes from its registered entry
(:mod:`builders.cli._benchmarks`). Modules whose name starts with ``_`` hold shared helpers. Command modules
import only argparse-level code at module level and load the heavy libraries (openai, PyAV, numpy,
datasets) inside their handlers, so ``--help`` prints at once (``benchmarks/cli_startup.py``).
"""

from __future__ import annotations

import argparse
import difflib
import errno
import importlib
import logging
import pkgutil
import re
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn


def command_names() -> list[str]:
    """The commands (sorted): one per registered benchmark (:mod:`builders.cli._benchmarks`), one per
    other module of this package (helper modules ``_*`` skipped)."""
    from builders.cli._benchmarks import registry

    modules = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return sorted(modules | set(registry()))


class _VersionAction(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked (importlib.metadata
    takes a third of the parser's start-up time)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the package version and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args) -> None:
        from builders import tool_version

        print(f"{parser.prog} {tool_version().split(' ', 1)[1]}")
        parser.exit()


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)$")


def _did_you_mean(given: str, options: list[str]) -> str:
    close = difflib.get_close_matches(given, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one or two lines, from the parser of the command they concern: the message
    naming the argument and the closest valid spelling (difflib), then the full usage only when it is
    short (a command with fifty options points to its ``--help`` instead). Subcommand parsers are of
    the same class (argparse makes them ``type(parent)``)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, "_parser"):  # the innermost command's parser: the one that owns the flags
            parsed._parser = self
        return parsed, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner: argparse.ArgumentParser = parsed._parser
            flags = [o for o in owner._option_string_actions if o.startswith("--")]
            hint = next(
                (h for e in extras if e.startswith("-") and (h := _did_you_mean(e.split("=")[0], flags))), ""
            )
            owner.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        del parsed._parser
        return parsed

    def error(self, message: str) -> NoReturn:
        invalid = _INVALID_CHOICE.search(message)
        if invalid:
            message += _did_you_mean(invalid["given"], re.findall(r"'([^']*)'", invalid["choices"]))
        usage = self.format_usage().strip()
        hint = usage if usage.count("\n") < 3 else f"run '{self.prog} --help' for its options"
        self.exit(2, f"{self.prog}: error: {message}\n{hint}\n")


def _global_flags_after_the_command(parser: argparse.ArgumentParser, seen: set[int] | None = None) -> None:
    """``-v`` after the command as well as before it (``vqabench bqa evaluate ... -v``): every command's
    parser takes it, leaving the top-level value alone when not given (``SUPPRESS``)."""
    seen = set() if seen is None else seen
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if id(sub) in seen:
                    continue
                seen.add(id(sub))
                if "-v" not in sub._option_string_actions:
                    sub.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                                     help="log debug messages (as 'vqabench -v')")  # fmt: skip
                _global_flags_after_the_command(sub, seen)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vqabench",
        description=(
            "Tooling for the BQA (body-language emotion QA) and MarineLife-16K (marine video QA and "
            "captioning) benchmarks: sample frames, rebuild the datasets from raw sources with an LLM, "
            "export and publish them to the Hugging Face Hub, score model predictions, write reports."
        ),
        epilog="Run 'vqabench demo' first: it rebuilds both bundled samples offline and scores them.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    from builders.cli._benchmarks import registry
    from builders.cli._verbs import register_benchmark

    for name in command_names():
        if name in registry():
            register_benchmark(subparsers, registry()[name])
        else:
            importlib.import_module(f"{__name__}.{name}").register(subparsers)
        command = name.replace("_", "-")  # a module name cannot hold the command's hyphen
        if command not in subparsers.choices:
            raise RuntimeError(f"{__name__}.{name} must register the command {command!r} (module = command)")
    _global_flags_after_the_command(parser)
    return parser


def user_error(err: BaseException) -> str | None:
    """The one line a user sees for a failure of the input or the machine (None: a bug, whose
    traceback is shown): bad input (ValueError, a missing file), a step that cannot go on
    (RuntimeError), a file that cannot be written or read (a full disk, no permission: OSError, the
    file named), a reply cache SQLite cannot use, a YAML file that does not parse."""
    if isinstance(err, ValueError | RuntimeError | FileNotFoundError):
        return str(err)
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        text = f"{where}{err.strerror or err}"
        if err.errno == errno.ENOSPC:
            text += " (the disk is full: free space and rerun the same command; finished work is kept)"
        return text
    # Looked up, not imported: loaded only by the commands that use them (start-up speed).
    sqlite3, yaml = sys.modules.get("sqlite3"), sys.modules.get("yaml")
    if sqlite3 is not None and isinstance(err, sqlite3.Error):
        return f"SQLite: {err}"
    if yaml is not None and isinstance(err, yaml.YAMLError):
        return f"not valid YAML: {' '.join(str(err).split())}"
    return None


def _redacted_excepthook(kind, value, tb) -> None:
    """An uncaught exception's traceback, printed with every credential removed (-v shows them)."""
    from builders.files.redact import redact_text

    sys.stderr.write(redact_text("".join(traceback.format_exception(kind, value, tb))))


def main(argv: list[str] | None = None) -> int:
    from builders.files.redact import RedactingFilter, redact_text

    try:
        parser = build_parser()
    except RuntimeError as err:  # an install whose metadata lacks the benchmarks' entry points
        print(f"vqabench: {err}", file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    # Warnings and errors only: what a command did, it prints on stdout (-v: every debug line too).
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    for handler in logging.getLogger().handlers:  # no credential in any log line (-v: httpx's URLs)
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
    sys.excepthook = _redacted_excepthook
    # One INFO line per HTTP request would bury the progress: those loggers speak only with -v.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.NOTSET if args.verbose else logging.WARNING)
    try:
        if hasattr(args, "prompt"):  # every LLM command (builders.llm.cli.add_llm_arguments)
            from builders.llm.cli import apply_prompt_arguments

            apply_prompt_arguments(args)
        return int(args.func(args) or 0)
    except KeyboardInterrupt as err:  # Ctrl-C, or builders.llm.client.Interrupted (SIGINT, SIGTERM)
        said = f": {err}" if str(err) else ""
        print(f"vqabench: interrupted{redact_text(said.removeprefix(': interrupted'))}; rerun the same command to resume",
              file=sys.stderr)  # fmt: skip
        return getattr(err, "exit_status", 130)
    except Exception as err:
        # Expected user-facing failures: one clear line, no traceback (use -v to see it).
        message = user_error(err)
        if message is None or args.verbose:
            raise
        print(f"vqabench: error: {redact_text(message)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
