"""``--estimate`` against a real tokenizer, on the bundled samples' own requests.

The estimate (:mod:`builders.llm.cost`) counts text as ``ceil(chars / 4)`` plus 4 tokens per
message plus the response schema's JSON, so that it needs no tokenizer download. This script runs
``--estimate`` (nothing is sent) for the first LLM step of both builds and for both evaluation
runners on the bundled samples, keeps every request the estimate saw, and counts the same text
with OpenAI's ``o200k_base`` (GPT-4o's) tokenizer, offline from the ``bpe-openai`` package
(``pip install bpe-openai``; ``tiktoken`` is used instead when its encoding file is cached). The
reference adds OpenAI's documented chat overhead: 3 tokens per message and 3 to prime the reply;
the response schema is counted as its JSON (what OpenAI does with it inside is not published).

Image tokens are not compared: for GPT-4o the provider's rule *is* the count (85 + 170 per 512-px
tile, checked against its worked examples in ``tests/test_llm_cost.py``), and the estimate applies
it to each frame's real size.

    python benchmarks/estimate_tokens.py [--root /tmp/vqabench-tokens]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

PER_MESSAGE, REPLY_PRIMING = 3, 3  # OpenAI's chat-format overhead for gpt-4o (its cookbook)


def encoder() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its encoding file cannot be downloaded here
        pass
    try:
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")
    except ImportError:
        sys.exit("needs a real tokenizer offline: pip install bpe-openai")


def text_parts(request: Any) -> list[str]:
    texts = []
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [p["text"] for p in content or [] if p.get("type") == "text"]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, default=Path("/tmp/vqabench-tokens"))
    args = parser.parse_args()
    enc = encoder()
    import builders.llm.client as client_module
    from builders.cli import main as cli
    from builders.llm.cost import _schema_json

    seen: list[tuple[str, Any, Any]] = []
    original = client_module.estimate_request
    label = ["?"]

    def recording(request: Any, model: str, max_tokens: int | None = None) -> Any:
        estimate = original(request, model, max_tokens)
        seen.append((label[0], request, estimate))
        return estimate

    client_module.estimate_request = recording
    shutil.rmtree(args.root, ignore_errors=True)
    root = args.root
    model = ["--llm-model", "gpt-4o"]
    for name, data in (("bqa", "bqa"), ("marinelife", "ml")):  # the samples as Hub folders to evaluate
        work, out = str(root / f"{data}-data"), str(root / data)
        assert cli([name, "build", "--sample", "--replay", "--work", work, "--export", out]) == 0
    runs = {
        "BQA build, STEP2 questions": ["bqa", "build", "--sample", "--work", str(root / "bqa-w"), "--estimate", *model],
        "MarineLife build, captions": ["marinelife", "build", "--sample", "--work", str(root / "ml-w"), "--estimate", *model],
        "BQA evaluate (test)": ["bqa", "evaluate", "--data", str(root / "bqa"), "--split", "test",
                                "--out", str(root / "b.jsonl"), "--estimate", *model],
        "MarineLife evaluate (test)": ["marinelife", "evaluate", "--data", str(root / "ml"), "--split", "test",
                                       "--out", str(root / "m.jsonl"), "--estimate", *model],
    }  # fmt: skip
    for name, argv in runs.items():
        label[0] = name
        cli(argv)  # an estimate exits 0; printed lines are the command's own
    print(
        f"\n{'requests of':<30} {'n':>4} {'estimated text':>15} {'o200k_base':>11} {'ratio':>6} {'per request':>13}"
    )
    figures = {}
    for name in runs:
        rows = [(r, e) for n, r, e in seen if n == name]
        if not rows:
            print(f"{name:<30} no requests seen")
            continue
        ours, real, ratios = 0, 0, []
        for request, estimate in rows:
            count = sum(len(enc.encode(t)) for t in text_parts(request))
            count += PER_MESSAGE * len(request.messages) + REPLY_PRIMING
            if request.schema is not None:
                count += len(enc.encode(json.dumps(_schema_json(request.schema))))
            ours += estimate.text_tokens
            real += count
            ratios.append(estimate.text_tokens / count)
        print(f"{name:<30} {len(rows):>4} {ours:>15,} {real:>11,} {ours / real:>6.2f} "
              f"{min(ratios):>6.2f}-{max(ratios):.2f}")  # fmt: skip
        figures[name] = {"requests": len(rows), "estimated": ours, "o200k": real}
    (root / "figures.json").write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
