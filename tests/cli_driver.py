"""Run several ``vqabench`` command lines in one real process (the imports paid once): a JSON list of
``{"args": [...], "cwd": "..."}`` on stdin, a JSON list of ``{"rc", "stdout", "stderr"}`` on stdout.

An exception ``vqabench`` does not turn into its one-line error (a bug) is reported as ``rc`` 1 with its
traceback in ``stderr``, as the real process would print it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback


def run_one(args: list[str], cwd: str) -> dict[str, object]:
    from builders.cli import main

    out, err = io.StringIO(), io.StringIO()
    os.chdir(cwd)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except SystemExit as done:  # argparse
            rc = done.code if isinstance(done.code, int) else 2
        except BaseException:  # noqa: BLE001 - what the process would show: a traceback, exit 1
            traceback.print_exc()
            rc = 1
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    runs = json.load(sys.stdin)
    results = [run_one(r["args"], r["cwd"]) for r in runs]
    sys.stdout.write(json.dumps(results))
