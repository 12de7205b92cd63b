"""The toy's evaluation runner: one LLM request per question, through the one LLM client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builders.evaluation.run import PredictionRun
from builders.llm.client import LLMClient, LLMRequest
from vqabench_toy.data import ToySplit
from vqabench_toy.metric import parse


def evaluate(data: ToySplit, client: LLMClient, work_dir: Path, out: Path, **_: Any) -> PredictionRun:
    requests = [
        LLMRequest([{"role": "user", "content": f"{r['question']} Choices: {', '.join(r['choices'])}."}])
        for r in data.rows
    ]
    results = client.run(requests)
    failed = {r["id"]: str(res.error) for r, res in zip(data.rows, results, strict=True) if not res.ok}
    lines = [
        {"id": r["id"], "raw_output": res.value, "parsed_answer": parse(res.value), "reference": r["answer"]}
        for r, res in zip(data.rows, results, strict=True)
        if res.ok
    ]
    if not failed:
        out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return PredictionRun(out if not failed else None, len(data.rows), len(lines), {}, failed)
