"""Judge scores are bound to their items (issue 37, item 9): with each reply shifted by one request
(a proxy or server mixing replies up), 8 of 12 items got another item's scores and the command exited
0. Judge requests now carry their item's id, and a reply naming another item is refused and re-asked,
never scored for this one. ``vqabench judge score`` against the local chat server."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from builders.cli import main as cli_main
from builders.scripted.chat_requests import item_id, last_user_text, with_item_id
from builders.testing.chat_server import ChatServer

# Per item (camera, activity, relation): the scores its own reply gives, written in its prediction.
SCORES = [(5, 0, 5), (3, 4, 2), (1, 1, 1), (4, 5, 3), (2, 2, 4), (0, 3, 5),
          (5, 5, 5), (0, 0, 0), (2, 3, 4), (4, 1, 0), (3, 3, 3), (1, 4, 2)]  # fmt: skip
MARK = re.compile(r"<<(\d),(\d),(\d)>>")


def own_reply(body) -> dict:
    """The reply a judge gives the request ``body``: the scores written in its prediction, its item id."""
    camera, activity, relation = map(int, MARK.search(body["messages"][0]["content"]).groups())
    return with_item_id(body, {"camera": camera, "activity": activity, "relation": relation})


def write_predictions(path: Path) -> Path:
    """A predictions file of one OEMU item per :data:`SCORES` entry, its scores in its prediction."""
    path.write_text("".join(
        json.dumps({"raw_output": f"<<{a},{b},{c}>> The camera follows animal {i}.", "reference": f"Reference {i}.",
                    "question": "How does the camera relate to the animal?"}) + "\n"
        for i, (a, b, c) in enumerate(SCORES)
    ))  # fmt: skip
    return path


class ShiftedByOne:
    """Answers each request with the reply meant for the request before it (the first with its own)."""

    def __init__(self) -> None:
        self.lock, self.previous = threading.Lock(), None

    def __call__(self, body):
        with self.lock:
            meant_for, self.previous = self.previous or body, body
        return own_reply(meant_for)


def test_a_reply_meant_for_another_item_is_never_scored_for_this_one(tmp_path, capsys):
    rows = write_predictions(tmp_path / "predictions.jsonl")
    out = tmp_path / "judged.json"
    with ChatServer(model=None) as server:
        server.handler = ShiftedByOne()
        code = cli_main(["judge", "score", str(rows), "--out", str(out), "--items", "--llm-model", "judge",
                         "--llm-base-url", server.url, "--llm-api-key-env", "none", "--llm-concurrency", "1",
                         "--llm-cache", str(tmp_path / "cache.sqlite")])  # fmt: skip
        bodies = [r.body for r in server.chat_requests]
    result = json.loads(out.read_text())
    scored = {item["index"]: item["criteria"] for item in result["items"] if "criteria" in item}
    assert scored, capsys.readouterr()
    for index, criteria in scored.items():  # every score given is the item's own
        assert tuple(criteria[c] for c in ("camera", "activity", "relation")) == SCORES[index]
    # Each request showed its item's id, and the ids differ: a mixed-up reply is recognisable.
    ids = [item_id(b) for b in bodies if len(b["messages"]) == 1]
    assert len(set(ids)) == len(SCORES) and None not in ids
    failed = len(SCORES) - len(scored)
    assert code == (1 if failed else 0)
    reasks = [b for b in bodies if len(b["messages"]) > 1]
    assert reasks and all("not about this request's item" in last_user_text(b) for b in reasks)
