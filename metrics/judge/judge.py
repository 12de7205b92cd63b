"""LLM-judge scores (0-5) of open-ended answers and captions against references, by rubric."""

import datasets
import evaluate

from builders.evaluation.rubrics import RUBRICS, get_rubric
from builders.scoring.judge import judge_client, judge_predictions
from builders.scoring.validation import NamedInputs

_CITATION = """\
@misc{marinelife16k,
    title = {MarineLife-16K: An Attribute-Rich Video-Text Dataset for Motion-Aware Marine Video Understanding},
    note = {Dataset paper; the judge criteria, weights and scales follow its appendix},
}
"""

_DESCRIPTION = """\
Scores predictions against references with an LLM judge and a versioned rubric (the config name):
`marinelife_open_ended` (default; the paper's OEMU: camera 35%, activity 30%, relation 35%),
`marinelife_caption` (BEH, AH, ECF, 5 = no hallucination), `marinelife_caption_review` (the caption
engine's S_c against the 13 attributes) or `custom` (criteria from a YAML/JSON file given as
`rubric_path=` to `evaluate.load`). Calls go through the project's LLM client: on-disk reply cache,
bounded concurrency, retries, validation with re-asks, replay of recorded replies. A judgement that
fails is excluded from the means and reported, never scored 0.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the answers or captions to judge.
    references (list): reference answers / captions (str); for `marinelife_caption_review` the
        attribute mappings {attribute: value}.
    questions (list of str, optional): the questions (shown to the judge where the rubric uses them).
    camera (list of str, optional): "static" or "moving" per item; adds `by_camera`.
    evidence (list of dict, optional): per item the ground-truth attributes (`marinelife_open_ended`).
    Judge settings (each optional; left out, it comes from VQABENCH_JUDGE_<NAME>, then the default;
    "none" switches an optional one off):
    model (str): the judge model id (VQABENCH_JUDGE_MODEL; required one way or the other).
    base_url (str): OpenAI-compatible base URL (default https://api.openai.com/v1).
    api_key_env (str): the NAME of the variable holding the key (default OPENAI_API_KEY); "none"
        for keyless local servers like vLLM or Ollama.
    max_concurrency (int): requests in flight (8). timeout (float): seconds per attempt, the whole
        reply included (120). max_reply_mb (float): largest reply body read (16).
    max_retries (int): the SDK's transport retries (4). max_validation_retries (int): re-asks
        after an invalid reply (2). progress (bool): show a progress bar (True).
    temperature (float), seed (int), max_tokens (int), extra_body (dict): sampling settings sent
        with each request (0, 0, none, none); part of the cache key.
    cache_path (str): SQLite reply cache (VQABENCH_JUDGE_CACHE, else
        ~/.cache/vqabench/judge-cache.sqlite).
    mode (str): normal, refresh or replay (VQABENCH_JUDGE_MODE).
    replies_path (str): recorded replies JSONL to replay (VQABENCH_JUDGE_REPLIES).
    return_items (bool, optional): add per-item scores as `items`.
    confidence (float, optional): level of the intervals (0.95).
Returns:
    score (float or None): mean weighted score (0-5) over the judged items;
    score_ci95 (list or None): its Student-t interval (None below 2 items), keyed by its level
        (`score_ci90` at confidence=0.9);
    criteria (dict): mean per criterion; criteria_ci95 (dict): their intervals;
    n (int): items judged; n_failed (int) and failed (list): items without a usable judgement;
    by_camera (dict, with `camera`): {"static": {score, score_ci95, criteria, criteria_ci95, n}, "moving": {...}};
    judge (dict): rubric, rubric_version, signature, model, model_reported, tokens, cache_hits, api_calls;
    confidence (float): the intervals' level.
    `JudgeResult.from_dict(results)` (builders.scoring.judge_results) reads this back as a typed result.
Examples:
    >>> from builders import metric_path
    >>> judge = evaluate.load(metric_path("judge"))  # marinelife_open_ended
    >>> judge.rubric.signature
    'rubric:marinelife_open_ended|v:2|prompt:judge_marinelife_open_ended@2|scale:0-5|w:camera=0.35,activity=0.3,relation=0.35|explain:none'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Judge(NamedInputs, evaluate.Metric):  # NamedInputs: a missing input is named
    def __init__(self, config_name=None, rubric_path=None, **kwargs):
        # The rubric must exist before evaluate's __init__ calls _info().
        name = RUBRICS.default if config_name in (None, "default") else config_name
        self.rubric = get_rubric(name, rubric_path)
        super().__init__(config_name=name, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Judge the predictions (see the inputs description below)."""
        # evaluate needs every key of a struct feature in every item: give a structured reference all its
        # fields (absent or None ones "", which the prompt shows as "none annotated") and drop other keys.
        fields = self.rubric.reference_fields
        if fields and references is not None:
            references = [
                {a: r.get(a) or "" for a in fields} if isinstance(r, dict) else r for r in references
            ]
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _info(self):
        fields = self.rubric.reference_fields
        references = {f: datasets.Value("string") for f in fields} if fields else datasets.Value("string")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": references}),
        )

    def _compute(
        self,
        predictions,
        references,
        questions=None,
        camera=None,
        evidence=None,
        model=None,
        base_url=None,
        api_key_env=None,
        max_concurrency=None,
        cache_path=None,
        mode=None,
        replies_path=None,
        return_items=False,
        timeout=None,
        max_reply_mb=None,
        max_retries=None,
        max_validation_retries=None,
        temperature=None,
        seed=None,
        max_tokens=None,
        extra_body=None,
        progress=None,
        confidence=0.95,
    ):
        client = judge_client(
            model,
            base_url,
            api_key_env,
            max_concurrency,
            cache_path,
            mode,
            replies_path,
            timeout=timeout,
            max_reply_mb=max_reply_mb,
            max_retries=max_retries,
            max_validation_retries=max_validation_retries,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            extra_body=extra_body,
            progress=progress,
            caller="python",  # errors say model=..., not --llm-model: this is called from Python
        )
        with client:
            return judge_predictions(
                predictions,
                references,
                self.rubric,
                client,
                questions=questions,
                groups=RUBRICS.groups("camera", camera),
                evidence=evidence,
                return_items=return_items,
                confidence=confidence,
            ).to_dict()
