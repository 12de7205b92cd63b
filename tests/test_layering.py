"""The layering of the code base stays true: imports point one way and no packages form a cycle.

Every module of ``builders``, ``bqa``, ``marinelife16k`` and ``metrics`` is parsed with :mod:`ast`
(imports at module level *and* inside functions, since a lazy import is still a dependency) and
mapped to its layer::

    {builders.files, builders.options} < builders.video
      < {builders.llm, builders.hub, builders.scoring} < builders.runs
      < {bqa, marinelife16k} < {builders.pipelines, builders.evaluation, builders.report}
      < {builders.demo, builders.human_study, builders.integrations} < builders.cli < metrics

A module may import its own unit (the longest key of :data:`LAYERS` that prefixes its name) and any
unit of a lower layer. An import into a higher layer fails; an import sideways (another unit of
the same layer) fails unless :data:`SIDEWAYS` allows it and says why. ``builders.testing`` (the test
doubles) is a side layer: see :data:`TESTING_MAY_IMPORT` and :data:`MAY_IMPORT_TESTING`. It is not in
the wheel, and neither are ``builders.testing.samples`` (the scripts that write and record the bundled
samples, above every layer): nothing that ships may import either.

Separately, no two packages (``builders.<sub>``, ``builders.pipelines.bqa``, ``bqa``, ``bqa.sample``,
... every folder with an ``__init__.py``) may import each other, directly or round a longer loop:
the strongly connected components of the package graph must all be single packages.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP_PACKAGES = ("builders", "bqa", "marinelife16k", "metrics")

# Unit -> layer rank; a module belongs to the longest unit that prefixes its dotted name.
LAYERS: dict[str, int] = {
    "builders": 0,  # the package root holds only a docstring
    "builders.files": 0,
    "builders.options": 0,  # argparse types shared by every command's options (numeric ranges)
    "builders.video": 1,
    "builders.llm": 2,
    "builders.hub": 2,
    "builders.scoring": 2,
    "builders.runs": 3,
    "bqa": 4,
    "marinelife16k": 4,
    "builders.pipelines": 5,
    "builders.pipelines.bqa": 5,
    "builders.pipelines.marinelife": 5,
    "builders.evaluation": 5,
    "builders.report": 5,
    "builders.demo": 6,
    "builders.human_study": 6,
    "builders.integrations": 6,  # lmms-eval tasks and VLMEvalKit datasets over the runners' records
    "builders.scripted": 6,  # the scripted responders `vqabench serve` answers with (a double's rules too)
    "builders.cli": 7,
    "metrics": 8,
}
TESTING = "builders.testing"
SAMPLE_SCRIPTS = "builders.testing.samples"

# Sideways imports (importer prefix, imported prefix) allowed between units of one layer, and why.
SIDEWAYS: dict[tuple[str, str], str] = {
    **dict.fromkeys(
        [("builders.scoring.judge", "builders.llm"), ("builders.scoring.rubrics", "builders.llm")],
        "the judge core (rubric -> request -> reply -> score) asks its LLM through the one client and "
        "the one prompt registry, like every generation step",
    ),
    ("builders.pipelines.bqa.step4_difficulty", "builders.evaluation.bqa_answers"): (
        "STEP4 grades difficulty by how many models answer a question right: it asks them exactly as "
        "the evaluation runner does, so both share one prompt and one answer reader"
    ),
}

# The test doubles imitate models, servers and media; they may use the primitives they serve
# through, never the pipelines, runners or dataset code they are meant to test. A double that plays
# a model answering about a dataset needs that dataset's words (emotions, camera kinds, attribute
# names), as the real model would see them in the prompt: the vocabulary modules only.
TESTING_MAY_IMPORT = (
    "builders.files",
    "builders.video",
    "builders.llm",
    "builders.hub",
    "builders.scoring",
    "bqa.vocabulary",
    "marinelife16k.vocabulary",
    "builders.scripted",
)
# The scripted responders ship (``vqabench serve``) but stand in front of the same code as the doubles:
# they follow the doubles' rule (:data:`TESTING_MAY_IMPORT`), checked in :func:`layering_error`.
SCRIPTED = "builders.scripted"
# Who may import a test double: the sample-making and recording scripts (they play the doubles into
# recordings); nothing the doubles could be testing, and nothing in the wheel (the doubles are not).
MAY_IMPORT_TESTING = (SAMPLE_SCRIPTS,)


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    line: int
    imported: str  # dotted module (or package) name, resolved to one of ours

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}) imports {self.imported}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def our_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for top in TOP_PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if ".venv" not in path.parts:
                modules[module_name(path)] = path
    return modules


MODULES = our_modules()


def ours(name: str) -> bool:
    return name.split(".")[0] in TOP_PACKAGES


def resolve(name: str) -> str:
    """The longest prefix of ``name`` that is one of our modules (``from a import b`` may name a
    submodule ``a.b`` or a function of ``a``)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts) or name


def imports_of(module: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if is_package(path) else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            if ours(name):
                found.append(Import(module, node.lineno, resolve(name)))
    return list(dict.fromkeys(found))  # one per imported module and line


ALL_IMPORTS = [imp for module, path in MODULES.items() for imp in imports_of(module, path)]


def unit_of(module: str) -> str:
    if module == SAMPLE_SCRIPTS or module.startswith(SAMPLE_SCRIPTS + "."):
        return SAMPLE_SCRIPTS
    if module == TESTING or module.startswith(TESTING + "."):
        return TESTING
    best = max((unit for unit in LAYERS if module == unit or module.startswith(unit + ".")), key=len)
    return best


def under(module: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layering_error(imp: Import) -> str | None:
    source, target = unit_of(imp.importer), unit_of(imp.imported)
    if source == target:
        return None
    if target == SAMPLE_SCRIPTS:
        return f"{imp}: the sample scripts are not in the wheel; nothing of the package may import them"
    if source == SAMPLE_SCRIPTS:
        return None  # scripts run from a checkout, over everything: above every layer
    if source == TESTING:
        if under(imp.imported, TESTING_MAY_IMPORT):
            return None
        return f"{imp}: a test double may import only {', '.join(TESTING_MAY_IMPORT)}"
    if source == SCRIPTED and not under(imp.imported, TESTING_MAY_IMPORT):
        return f"{imp}: a scripted responder may import only {', '.join(TESTING_MAY_IMPORT)}"
    if target == TESTING:
        if under(imp.importer, MAY_IMPORT_TESTING):
            return None
        return f"{imp}: only {', '.join(MAY_IMPORT_TESTING)} may import the test doubles"
    if LAYERS[target] < LAYERS[source]:
        return None
    if LAYERS[target] == LAYERS[source] and any(
        under(imp.importer, a) and under(imp.imported, b) for a, b in SIDEWAYS
    ):
        return None
    direction = "sideways into" if LAYERS[target] == LAYERS[source] else "up into"
    return f"{imp}: {source} (layer {LAYERS[source]}) reaches {direction} {target} (layer {LAYERS[target]})"


def package_of(module: str) -> str:
    return module if is_package(MODULES[module]) else module.rpartition(".")[0]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def package_cycles(imports: list[Import]) -> list[str]:
    graph: dict[str, set[str]] = {}
    edges: dict[tuple[str, str], Import] = {}
    for imp in imports:
        if imp.imported not in MODULES:
            continue
        a, b = package_of(imp.importer), package_of(imp.imported)
        graph.setdefault(a, set())
        graph.setdefault(b, set())
        if a != b:
            graph[a].add(b)
            edges.setdefault((a, b), imp)
    messages = []
    for component in strongly_connected(graph):
        if len(component) > 1:
            loop = shortest_loop(graph, component)
            witnesses = "; ".join(str(edges[a, b]) for a, b in itertools.pairwise(loop))
            messages.append(
                f"cycle between {', '.join(component)}; one loop: {' -> '.join(loop)} ({witnesses})"
            )
    return messages


def shortest_loop(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """The shortest import loop through the component's first package (breadth first), as
    ``[p, ..., p]``: one loop is enough to see where to cut."""
    members, start = set(component), component[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if child not in parent:
                    parent[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no loop through {start} in {component}")


def test_every_module_is_in_a_named_layer():
    """A new ``builders/<sub>/`` must be given its layer here, and nothing lives flat in ``builders/``
    (its root would otherwise be a bottom layer that anything could grow into)."""
    subpackages = {f"builders.{p.parent.name}" for p in (ROOT / "builders").glob("*/__init__.py")}
    assert subpackages - set(LAYERS) - {TESTING} == set()
    assert sorted(p.name for p in (ROOT / "builders").glob("*.py")) == ["__init__.py"]


def test_imports_point_down():
    errors = [error for imp in ALL_IMPORTS if (error := layering_error(imp))]
    assert not errors, "imports against the layering:\n" + "\n".join(errors)


def test_no_package_cycles():
    cycles = package_cycles(ALL_IMPORTS)
    assert not cycles, "package cycles:\n" + "\n".join(cycles)


def test_sideways_allowances_are_used():
    """An allowance no import needs any more is stale: drop it rather than let it widen the rules."""
    for importer, imported in SIDEWAYS:
        assert any(under(imp.importer, importer) and under(imp.imported, imported) for imp in ALL_IMPORTS), (
            importer,
            imported,
        )


# The checker itself, on hand-made graphs and imports (independent of the code base).


def test_checker_finds_cycles_and_upward_imports():
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"b"}}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c", "d", "e"]]
    assert shortest_loop(graph, ["a", "b", "c", "d", "e"]) == ["a", "b", "c", "a"]
    assert sorted(map(sorted, strongly_connected({"a": {"b"}, "b": set(), "c": {"a"}}))) == [
        ["a"],
        ["b"],
        ["c"],
    ]
    up = layering_error(Import("builders.files.jsonio", 3, "builders.cli.judge"))
    assert up == (
        "builders.files.jsonio (line 3) imports builders.cli.judge: "
        "builders.files (layer 0) reaches up into builders.cli (layer 7)"
    )
    assert "sideways" in layering_error(Import("bqa.stats", 9, "marinelife16k.vocabulary"))
    assert layering_error(Import("builders.testing.x", 1, "builders.pipelines.bqa.runner"))
    assert layering_error(Import("builders.testing.x", 1, "bqa.vocabulary")) is None
    assert layering_error(Import("builders.scripted.x", 1, "builders.pipelines.bqa.runner"))
    assert layering_error(Import("builders.cli.serve", 1, "builders.scripted.served")) is None
    assert layering_error(Import("builders.evaluation.bqa", 1, "builders.testing.chat_server"))
    assert layering_error(Import("builders.cli.bqa", 1, "builders.runs.steps")) is None


# A benchmark is a plug-in (issue 40): the layers shared by every benchmark ask the registry
# (builders.cli._benchmarks) instead of importing a benchmark's code. These shared modules still do;
# the list may only shrink (a new importer fails, and so does an entry that no longer imports one).
BENCHMARK_PACKAGES = ("bqa", "marinelife16k")
STILL_IMPORT_A_BENCHMARK = frozenset({
    "builders.demo.baseline", "builders.demo.recordings", "builders.demo.run",
    "builders.demo.samples", "builders.demo.scoring", "builders.evaluation.rubrics", "builders.human_study.report",
    "builders.human_study.source", "builders.integrations.items", "builders.integrations.lmms_eval.tasks",
    "builders.integrations.vlmevalkit.datasets", "builders.report", "builders.report.paper_tables",
})  # fmt: skip
#: Shared modules whose code (docstrings aside) names ``bqa`` or ``marinelife`` (imports, names,
#: strings): at most this many (43 on main before issue 40 was merged); the goal is the benchmarks' entries alone.
NAMING_A_BENCHMARK_AT_MOST = 40
_BENCHMARK_WORD = re.compile(r"bqa|marinelife", re.IGNORECASE)


def benchmark_own(module: str) -> bool:
    """A benchmark's package, or a module of a shared layer that is one benchmark's own by its name
    (``builders.pipelines.bqa``, ``builders.cli.marinelife``, ``metrics.bqa_accuracy``...)."""
    return under(module, BENCHMARK_PACKAGES) or any(_BENCHMARK_WORD.search(p) for p in module.split(".")[1:])


def shared(module: str) -> bool:
    """Code every benchmark runs through: not a benchmark's own, not a test double, not a scripted
    stand-in for a benchmark's models (``builders.scripted``, the doubles' rule)."""
    return not benchmark_own(module) and not under(module, (TESTING, SCRIPTED))


def code_words(path: Path) -> list[str]:
    """The names, attribute names, imported modules and string constants of a module, docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            words += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            words += [node.module or "", *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append(node.value)
    return words


def test_shared_modules_import_no_more_benchmark_code():
    importers = {imp.importer for imp in ALL_IMPORTS if benchmark_own(imp.imported) and shared(imp.importer)}
    assert importers - STILL_IMPORT_A_BENCHMARK == set(), "ask the benchmark registry instead"
    assert STILL_IMPORT_A_BENCHMARK - importers == set(), (
        "no longer imports a benchmark: drop it from the list"
    )


def test_shared_modules_naming_a_benchmark_do_not_grow():
    naming = [
        module
        for module, path in MODULES.items()
        if shared(module)
        and under(module, ("builders", "metrics"))
        and any(_BENCHMARK_WORD.search(word) for word in code_words(path))
    ]
    assert len(naming) <= NAMING_A_BENCHMARK_AT_MOST, "\n".join(naming)


def test_benchmark_checks_on_hand_made_names():
    assert benchmark_own("builders.pipelines.bqa.runner") and benchmark_own("marinelife16k.data")
    assert benchmark_own("metrics.bqa_accuracy.bqa_accuracy") and benchmark_own("builders.cli.marinelife")
    assert shared("builders.human_study.make") and not shared("builders.testing.chat_server")
    assert not benchmark_own("builders") and not benchmark_own("builders.report.leaderboard")
