"""Command-line papercuts a newcomer hit (issue 42), each as the user's shell sees it: a real
``vqabench`` process, its exit status and stderr."""

from __future__ import annotations

from pathlib import Path

from processes import vqabench

ROOT = Path(__file__).resolve().parent.parent
REPLIES = ROOT / "bqa" / "sample" / "baseline_replies.jsonl"


def test_a_flag_typo_is_reported_by_its_command_with_the_closest_flag(tmp_path):
    done = vqabench(["demo", "--ot", "x"], cwd=tmp_path)
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first == "vqabench demo: error: unrecognized arguments: --ot x (did you mean '--out'?)", (
        done.stderr
    )
    assert not (tmp_path / "x").exists()


def test_an_action_typo_gets_the_closest_action():
    done = vqabench(["bqa", "evalute"])
    assert done.returncode == 2
    assert "invalid choice: 'evalute'" in done.stderr and "(did you mean 'evaluate'?)" in done.stderr


def test_verbose_is_accepted_after_the_command_too():
    before, after = vqabench(["-v", "metrics", "path"]), vqabench(["metrics", "path", "-v"])
    assert before.returncode == after.returncode == 0, after.stderr
    assert after.stdout == before.stdout


def test_export_replies_takes_out_like_every_command(tmp_path):
    cache = tmp_path / "cache.sqlite"
    assert vqabench(["llm", "import-replies", str(REPLIES), str(cache)]).returncode == 0
    done = vqabench(["llm", "export-replies", str(cache), "--out", str(tmp_path / "out.jsonl")])
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(REPLIES.read_text(encoding="utf-8").splitlines()) > 0


def test_a_missing_api_key_is_refused_before_the_dataset_is_downloaded(tmp_path):
    """The Hub is unreachable here (port 9): the key error comes first, so nothing was tried."""
    done = vqabench(["bqa", "evaluate", "--data", "naist-nlp/BQA", "--split", "test", "--out", "p.jsonl",
                     "--llm-model", "gpt-4o", "--llm-api-key-env", "VQABENCH_TEST_NO_SUCH_KEY"],
                    cwd=tmp_path, HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"),
                    HF_HUB_OFFLINE="0")  # fmt: skip
    assert done.returncode == 2
    assert "VQABENCH_TEST_NO_SUCH_KEY" in done.stderr and "naist-nlp/BQA" not in done.stderr, done.stderr
    assert not (tmp_path / "hf" / "hub").exists()


def test_a_command_that_works_says_it_on_stdout_and_leaves_stderr_quiet(tmp_path):
    assert vqabench(["marinelife", "sample", "work"], cwd=tmp_path).returncode == 0
    done = vqabench(["marinelife", "export", "work", "hub"], cwd=tmp_path)
    assert done.returncode == 0 and "wrote" in done.stdout
    assert "INFO" not in done.stderr, done.stderr


def test_the_demo_timer_does_not_count_what_the_shell_ran_before_it():
    """``pip install -e . && vqabench demo``: bash runs the last command in its own process, so the
    process's start time (/proc) included the pip install (here: a 3 s sleep)."""
    import subprocess
    import sys

    code = ("from pathlib import Path; import os; from builders.demo.run import seconds_since_start; "
            "stat = Path('/proc/self/stat').read_text(); ticks = int(stat[stat.rindex(')') + 2:].split()[19]); "
            "age = float(Path('/proc/uptime').read_text().split()[0]) - ticks / os.sysconf('SC_CLK_TCK'); "
            "print(age, seconds_since_start())")  # fmt: skip
    done = subprocess.run(["bash", "-c", f'sleep 3 && exec "{sys.executable}" -c "{code}"'],
                          capture_output=True, text=True, check=True)  # fmt: skip
    process_age, timer = map(float, done.stdout.split())
    assert process_age - timer >= 2.9, (process_age, timer)


def test_judge_score_takes_out_like_every_command(tmp_path):
    from builders.cli import build_parser

    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"prediction": "a", "reference": "b"}\n', encoding="utf-8")
    args = build_parser().parse_args(
        ["judge", "score", str(predictions), "--out", "r.json", "--llm-model", "m"]
    )
    assert args.output == "r.json"


def test_the_judges_missing_api_key_is_refused_before_the_dataset_is_downloaded(tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"question_id": "q", "raw_output": "A fish."}\n', encoding="utf-8")
    done = vqabench(["marinelife", "judge", str(predictions), "--data", "someone/MarineLife-16K", "--out", "j.json",
                     "--llm-model", "gpt-4o", "--llm-api-key-env", "VQABENCH_TEST_NO_SUCH_KEY"],
                    cwd=tmp_path, HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"),
                    HF_HUB_OFFLINE="0")  # fmt: skip
    assert done.returncode == 2
    assert "VQABENCH_TEST_NO_SUCH_KEY" in done.stderr and "someone/MarineLife-16K" not in done.stderr, (
        done.stderr
    )
