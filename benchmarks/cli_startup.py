"""Start-up time of ``vqabench --help``, of every ``vqabench <command> --help``, and of a data command
refusing a ``--data`` path that does not exist (checked while parsing, before any heavy import).

Each command runs in a fresh interpreter (``python -m builders.cli ... --help``), ``--repeats``
times; the table shows the best wall time (noise from other processes only adds), its ratio to the floor measured in the same run
(``python -c pass``: the interpreter alone) and the heavy libraries the command imported (none is
needed to print help: command modules load them inside their handlers).

    python benchmarks/cli_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

# Libraries that take long to import and that no parser needs.
HEAVY = ("openai", "av", "numpy", "PIL", "pydantic", "datasets", "evaluate", "pyarrow", "tqdm", "yaml")

# Prints the heavy modules loaded by the time the help is out (argparse exits with SystemExit).
PROBE = """
import json, sys
from builders.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps([m for m in {heavy!r} if m in sys.modules]), file=sys.stderr)
"""


# A data command given a path that is not there: it must fail at once (exit status 2), naming it.
MISSING_DATA = ["bqa", "evaluate", "--data", "/nonexistent", "--out", "x.jsonl", "--llm-model", "m"]


def wall_time(argv: list[str], repeats: int, status: int = 0) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if done.returncode != status:
            raise SystemExit(f"{' '.join(argv)}: exit status {done.returncode}, expected {status}")
        times.append(time.perf_counter() - start)
    return min(times)


def heavy_imports(args: list[str]) -> list[str]:
    probe = PROBE.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", probe, *args], check=True, capture_output=True, text=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeats", type=int, default=7, help="runs per command (the best counts; default 7)"
    )
    args = parser.parse_args()

    from builders.cli import command_names

    floor = wall_time([sys.executable, "-c", "pass"], args.repeats)
    print(f"floor (python -c pass): {floor * 1000:.0f} ms, best of {args.repeats}")
    print(f"{'command':<34} {'ms':>6} {'x floor':>8}  heavy imports")
    for command in [[], *([name.replace("_", "-")] for name in command_names())]:  # module -> command
        argv = [*command, "--help"]
        seconds = wall_time([sys.executable, "-m", "builders.cli", *argv], args.repeats)
        heavy = ", ".join(heavy_imports(argv)) or "-"
        print(f"{' '.join(['vqabench', *argv]):<34} {seconds * 1000:>6.0f} {seconds / floor:>8.1f}  {heavy}")
    seconds = wall_time([sys.executable, "-m", "builders.cli", *MISSING_DATA], args.repeats, status=2)
    heavy = ", ".join(heavy_imports(MISSING_DATA)) or "-"
    print(
        f"{'vqabench bqa evaluate --data /nonexistent':<34} {seconds * 1000:>6.0f} {seconds / floor:>8.1f}  {heavy}"
    )


if __name__ == "__main__":
    main()
