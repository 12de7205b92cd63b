"""Check a built wheel's file list against the checkout: what users run is in, test doubles are out.

Run by .ci/run on the wheel it builds::

    python tests/wheel_contents.py dist/videoqa_bench_tools-*.whl

The wheel must hold exactly the checkout's shipped files: every module of ``bqa/``, ``marinelife16k/``
and ``builders/`` (but ``builders/testing/``: the fake chat and Hub servers, media writers, scripted
responders and the sample-recording scripts run from a checkout), the ``metrics/`` folder as
``builders/metrics/``, the data files that pyproject.toml's package-data patterns name (prompts,
samples, cards, schemas), and the LICENSE in its metadata; nothing more, nothing less. Prints the
wheel's size and file count. Exits 1 naming each missing or unexpected file. Not collected by pytest
(no ``test_`` prefix); ``tests/test_wheel_contents.py`` tests the comparison itself.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import zipfile
from pathlib import Path

import tomllib

CHECKOUT = Path(__file__).resolve().parent.parent
# Checkout folder -> where the wheel puts it.
SHIPPED = {
    "bqa": "bqa",
    "marinelife16k": "marinelife16k",
    "builders": "builders",
    "metrics": "builders/metrics",
}
NOT_SHIPPED = ("builders/testing",)  # checkout paths, with everything under them


def data_patterns(checkout: Path = CHECKOUT) -> list[str]:
    """File-name patterns of the data every package carries (pyproject's package-data for ``*``) and
    the package-specific ones, as wheel-path globs."""
    config = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))
    package_data: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    patterns = [f"*/{pattern}" for pattern in package_data["*"]]
    for package, extra in package_data.items():
        if package != "*":
            patterns += [f"{package.replace('.', '/')}/{pattern.replace('**/', '*')}" for pattern in extra]
    return patterns


def expected_files(checkout: Path = CHECKOUT) -> set[str]:
    """Wheel paths (outside ``*.dist-info``) the checkout's shipped folders give."""
    patterns = data_patterns(checkout)
    expected = set()
    for folder, target in SHIPPED.items():
        for path in (checkout / folder).rglob("*"):
            relative = path.relative_to(checkout).as_posix()
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            if any(relative == skip or relative.startswith(skip + "/") for skip in NOT_SHIPPED):
                continue
            wheel_path = target + relative[len(folder) :]
            if path.suffix == ".py" or any(fnmatch.fnmatch(wheel_path, p) for p in patterns):
                expected.add(wheel_path)
    return expected


def problems(names: list[str], expected: set[str]) -> list[str]:
    """What is wrong with a wheel holding ``names`` (zip member names), one line each."""
    found: list[str] = []
    metadata = [n for n in names if n.split("/", 1)[0].endswith(".dist-info")]
    if not any(
        n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in metadata
    ):
        found.append("no LICENSE in the wheel's metadata (*.dist-info/licenses/LICENSE)")
    payload = {n for n in names if n not in metadata and not n.endswith("/")}
    for name in sorted(payload):
        if name.startswith("builders/testing/"):
            found.append(f"{name}: a test double or sample-recording script is in the wheel")
        elif name not in expected:
            found.append(f"{name}: in the wheel but not among the checkout's shipped files")
    found += [f"{name}: missing from the wheel" for name in sorted(expected - payload)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path)
    args = parser.parse_args(argv)
    with zipfile.ZipFile(args.wheel) as wheel:
        infos = wheel.infolist()
    names = [info.filename for info in infos]
    packages = sorted({n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")})
    print(
        f"{args.wheel.name}: {args.wheel.stat().st_size:,} bytes, {len(names)} files "
        f"({sum(i.file_size for i in infos):,} bytes unpacked), {len(packages)} packages"
    )
    found = problems(names, expected_files())
    for line in found:
        print(f"wheel_contents: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
