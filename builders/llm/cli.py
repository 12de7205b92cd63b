"""The shared ``--llm-*`` command-line options, and the settings and client they give.

Argparse only at import time (cheap to import, so a command's ``--help`` does not load openai or
pydantic); the settings and client modules load when a handler asks for them (lazy for start-up speed).

Every :class:`~builders.llm.LLMSettings` field a user may want to change has a flag. A flag left
unset falls back to the environment variable ``<prefix><FIELD>`` (``VQABENCH_LLM_*`` for generation
steps, ``VQABENCH_JUDGE_*`` for judges, so that a judge is configured apart from the model it
judges), then to the field's default; :meth:`LLMSettings.from_env` is where those variables are read.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builders.options.numbers import NON_NEGATIVE_INT, NON_NEGATIVE_NUMBER, POSITIVE_INT, POSITIVE_NUMBER

if TYPE_CHECKING:
    from builders.llm.client import LLMClient
    from builders.llm.settings import LLMSettings

LLM_ENV_PREFIX = "VQABENCH_LLM_"
JUDGE_ENV_PREFIX = "VQABENCH_JUDGE_"
# The word that switches an optional setting off, on the command line and in the environment alike.
NONE = "none"

# argparse dest -> LLMSettings field, for the options add_llm_arguments adds.
SETTING_OPTIONS: dict[str, str] = {
    "llm_model": "model",
    "llm_base_url": "base_url",
    "llm_api_key_env": "api_key_env",
    "llm_concurrency": "max_concurrency",
    "llm_timeout": "timeout",
    "llm_max_reply_mb": "max_reply_mb",
    "llm_max_retries": "max_retries",
    "llm_max_validation_retries": "max_validation_retries",
    "llm_temperature": "temperature",
    "llm_seed": "seed",
    "llm_max_tokens": "max_tokens",
    "llm_extra_body": "extra_body",
}
# LLMSettings' defaults as the help shows them (not imported from there, to keep this module light;
# tests/test_llm_cli.py checks they agree).
SHOWN_DEFAULTS: dict[str, Any] = {
    "base_url": "https://api.openai.com/v1",
    "api_key_env": "OPENAI_API_KEY",
    "max_concurrency": 8,
    "timeout": 120.0,
    "max_reply_mb": 16.0,
    "max_retries": 4,
    "max_validation_retries": 2,
    "temperature": 0.0,
    "seed": 0,
    "max_tokens": None,
    "extra_body": None,
}


def _env_default(prefix: str, field: str) -> str:
    value = SHOWN_DEFAULTS[field]
    shown = NONE if value is None else f"{value:g}" if isinstance(value, float) else str(value)
    return f"env {prefix}{field.upper()}; default {shown}"


def _or_none(kind: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    """An argparse type: ``kind(text)``, or the string ``none`` kept as is (it switches the setting off)."""

    def parse(text: str) -> Any:
        if text.strip().lower() == NONE:
            return NONE
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} or 'none', got {text!r}") from None

    return parse


def _json_object(text: str) -> Any:
    if text.strip().lower() == NONE:
        return NONE
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f'expected a JSON object like \'{{"reasoning_effort": "low"}}\', got {text!r}'
        )
    return value


def _setting_flags(p: str) -> list[tuple[str, dict[str, Any]]]:
    """``(flag suffix, add_argument keywords)`` of every setting option; ``p`` is the env prefix."""
    return [
        ("model", {"help": f"model id, e.g. gemini-2.5-flash (env {p}MODEL; required)"}),
        ("base-url", {"help": f"OpenAI-compatible base URL ({_env_default(p, 'base_url')})"}),
        ("api-key-env", {"metavar": "NAME", "help": "NAME of the environment variable holding the API key, "
                         f"not the key ({_env_default(p, 'api_key_env')}); 'none' for keyless local servers "
                         "like vLLM or Ollama"}),
        ("concurrency", {"type": POSITIVE_INT,
                         "help": f"requests in flight at once ({_env_default(p, 'max_concurrency')})"}),
        ("timeout", {"type": POSITIVE_NUMBER, "metavar": "SECONDS",
                     "help": "seconds per HTTP attempt, all of it: connecting, the headers and the whole reply "
                     f"body ({_env_default(p, 'timeout')}); an endpoint that hangs holds an item for "
                     "attempts x (1 + retries) x this, plus backoff (said once, at the first timeout)"}),
        ("max-reply-mb", {"type": POSITIVE_NUMBER, "metavar": "MB",
                          "help": "largest reply body read; a longer one fails the call at once, unread "
                          f"({_env_default(p, 'max_reply_mb')})"}),
        ("max-retries", {"type": NON_NEGATIVE_INT, "metavar": "N", "help": "the SDK's retries on "
                         f"408/409/429/5xx and timeouts ({_env_default(p, 'max_retries')})"}),
        ("max-validation-retries", {"type": NON_NEGATIVE_INT, "metavar": "N", "help": "re-asks after a reply "
                                    "that fails validation or is truncated "
                                    f"({_env_default(p, 'max_validation_retries')})"}),
        ("temperature", {"type": _or_none(NON_NEGATIVE_NUMBER, "a number"), "metavar": "T",
                         "help": f"sampling temperature; 'none': the server's default "
                         f"({_env_default(p, 'temperature')})"}),
        ("seed", {"type": _or_none(int, "an integer"), "metavar": "N",
                  "help": f"sampling seed; 'none': not sent ({_env_default(p, 'seed')})"}),
        ("max-tokens", {"type": _or_none(POSITIVE_INT, "an integer"), "metavar": "N", "help": "reply length "
                        f"limit; 'none': the server's default ({_env_default(p, 'max_tokens')})"}),
        ("extra-body", {"type": _json_object, "metavar": "JSON", "help": "provider-specific request fields as "
                        'a JSON object, e.g. \'{"reasoning_effort": "low"}\' '
                        f"({_env_default(p, 'extra_body')})"}),
    ]  # fmt: skip


def add_llm_arguments(
    parser: argparse.ArgumentParser, cache: bool = True, env_prefix: str = LLM_ENV_PREFIX
) -> None:
    """Add the shared ``--llm-*`` options (and ``--prompt NAME=PATH``) to a command's parser.

    Pair with :func:`llm_setting_overrides` (or :func:`builders.llm.settings_from_args` /
    :func:`builders.llm.client_from_args`). ``env_prefix`` names the variables unset options fall
    back to (shown in the help). ``cache=False`` leaves out the cache options (``--llm-cache``,
    ``--llm-mode``, ``--llm-replies``).
    """
    p = env_prefix
    group = parser.add_argument_group(
        "LLM",
        f"endpoint, sampling and cache; an option left unset falls back to the {p}* variable its help names",
    )
    for suffix, keywords in _setting_flags(p):
        group.add_argument(f"--llm-{suffix}", **keywords)
    group.add_argument(
        "--prompt",
        action="append",
        default=[],
        type=_prompt_file,
        metavar="NAME=PATH",
        help="replace the packaged prompt NAME (builders/llm/prompts/NAME.md) by the text of the file PATH "
        "(same {{ variables }}; front matter optional); its sha256 becomes the prompt version in every "
        "record, so reports refuse to mix runs made with different texts; repeatable",
    )
    if not cache:
        return
    group.add_argument("--llm-cache", help="SQLite reply cache; reruns never repeat a call that succeeded")
    group.add_argument(
        "--llm-mode",
        choices=("normal", "refresh", "replay", "batch"),
        default="normal",
        help="normal: use and fill the cache; refresh: call again and overwrite; "
        "replay: cache or recorded replies only, a miss is an error; "
        "batch: what the cache lacks is sent as OpenAI-format batches (Files and Batch API, 24 h window, about "
        "half the price), one round per step (per stage of a two-stage style), polled and checked as any reply, "
        "then the step goes on from the cache; the batches are journaled beside the cache, so a rerun after a "
        "kill or Ctrl-C polls them and never creates them again",
    )
    group.add_argument(
        "--llm-batch-max-requests",
        type=POSITIVE_INT,
        default=50_000,
        metavar="N",
        help="--llm-mode batch: most requests in one batch file (default 50000, OpenAI's limit)",
    )
    group.add_argument(
        "--llm-batch-max-mb",
        type=POSITIVE_NUMBER,
        default=200.0,
        metavar="MB",
        help="--llm-mode batch: largest batch file (default 200, OpenAI's limit)",
    )
    group.add_argument(
        "--llm-batch-poll",
        type=POSITIVE_NUMBER,
        default=30.0,
        metavar="SECONDS",
        help="--llm-mode batch: seconds between polls of the batches (default 30)",
    )
    group.add_argument("--llm-replies", help="recorded replies (JSONL) to replay from, instead of a cache")


def add_derived_llm_arguments(
    parser: argparse.ArgumentParser, prefix: str, env_prefix: str, title: str, what: str
) -> None:
    """``--<prefix>-model``, ``--<prefix>-base-url``, ... for a second model of one command (e.g.
    ``rationale-llm``: who writes a two-stage style's rationales): each option left unset falls back to
    ``<env_prefix><FIELD>``, then to the command's ``--llm-*`` value. Read with
    :func:`derived_settings_from_args`; it shares the command's cache options."""
    group = parser.add_argument_group(
        title,
        f"{what}; an option left unset falls back to the {env_prefix}* variable, then to its --llm-* value",
    )
    for suffix, keywords in _setting_flags(env_prefix):
        help_text = keywords["help"].split(" (env ")[0].split(" (" + env_prefix)[0]
        group.add_argument(
            f"--{prefix}-{suffix}", **{**keywords, "help": f"{help_text} (default: --llm-{suffix})"}
        )


def derived_settings_from_args(
    args: argparse.Namespace, base: LLMSettings, prefix: str, env_prefix: str
) -> LLMSettings | None:
    """Settings of :func:`add_derived_llm_arguments`' options over ``base`` (the command's own); None
    when none is given, flag or variable: then the command's own client serves."""
    dest = prefix.replace("-", "_")
    given = {field: getattr(args, f"{dest}_{name[4:]}", None) for name, field in SETTING_OPTIONS.items()}
    derived = base.derive(env_prefix, **given)
    return None if derived == base and not any(v is not None for v in given.values()) else derived


def _prompt_file(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME=PATH (e.g. bqa_question=my_question.md), got {text!r}"
        )
    return name.strip(), path.strip()


def apply_prompt_arguments(args: argparse.Namespace) -> dict[str, str]:
    """Replace the prompts named by ``--prompt NAME=PATH`` for this process (every file checked
    before anything runs); ``{name: version}`` of the replaced ones. The entry point calls it for
    every command that has the option."""
    given: list[tuple[str, str]] = getattr(args, "prompt", None) or []
    names = [name for name, _ in given]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"--prompt names {', '.join(twice)} more than once")
    from builders.llm.prompts import set_prompt_overrides  # lazy: yaml

    return set_prompt_overrides(dict(given))


def llm_setting_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``{LLMSettings field: value}`` for every :func:`add_llm_arguments` option given (None: not
    given, so the environment or the default applies; the string ``none`` switches a setting off)."""
    return {field: getattr(args, dest, None) for dest, field in SETTING_OPTIONS.items()}


def given_llm_options(args: argparse.Namespace) -> list[str]:
    """The ``--llm-*`` setting flags given on the command line: for commands that replay a recording
    under its own settings, which must refuse them rather than ignore them."""
    return [
        "--" + dest.replace("_", "-") for dest in SETTING_OPTIONS if getattr(args, dest, None) is not None
    ]


def settings_from_args(args: argparse.Namespace, prefix: str = LLM_ENV_PREFIX) -> LLMSettings:
    """Settings from :func:`add_llm_arguments` options, falling back to the ``<prefix>*``
    environment variables, then the defaults."""
    from builders.llm.settings import LLMSettings  # lazy for start-up speed (pydantic)

    return LLMSettings.from_env(prefix, **llm_setting_overrides(args))


def apply_batch_arguments(args: argparse.Namespace, client: Any) -> None:
    """The ``--llm-batch-*`` limits on a batch-mode client (:mod:`builders.llm.batch`)."""
    batch = getattr(client, "batch", None)
    if batch is None or getattr(args, "llm_batch_max_requests", None) is None:
        return
    batch.max_requests, batch.max_mb, batch.poll_seconds = (
        args.llm_batch_max_requests, args.llm_batch_max_mb, args.llm_batch_poll,
    )  # fmt: skip
    if WRITE_TO is not None:
        batch.write_to = WRITE_TO


#: Set by ``vqabench llm batch write``: the folder a batch-mode command writes its round to.
WRITE_TO: Path | None = None


def require_api_key(args: argparse.Namespace, prefix: str = LLM_ENV_PREFIX) -> None:
    """Refuse a missing API key before any work a command does ahead of its first request (downloading
    a Hub dataset, decoding frames): the key is otherwise read only when the first request is sent.
    Nothing is checked when nothing will be sent (a replay, ``--estimate``). ``prefix``: the
    variables unset options fall back to (the judge's: :data:`JUDGE_ENV_PREFIX`)."""
    if (
        args.llm_replies
        or args.llm_mode == "replay"
        or getattr(args, "estimate", False)
        or WRITE_TO is not None
    ):
        return  # nothing sent: a replay, an estimate, batch files written for an offline engine
    settings_from_args(args, prefix).read_api_key()


def client_from_args(
    args: argparse.Namespace, default_cache: str | Path | None = None, *, progress: bool | None = None
) -> LLMClient:
    """An :class:`~builders.llm.LLMClient` from :func:`add_llm_arguments` options (``--llm-cache``
    defaults to ``default_cache``, e.g. ``<work dir>/llm-cache.sqlite``). ``progress=False`` silences
    the client's own bar, for callers that show a bar per step."""
    from builders.llm.client import LLMClient  # lazy for start-up speed (openai)

    settings = settings_from_args(args)
    if progress is not None:
        settings = settings.model_copy(update={"progress": progress})
    if args.llm_replies:
        return LLMClient(settings, replies_path=args.llm_replies)
    return LLMClient(settings, cache_path=args.llm_cache or default_cache, mode=args.llm_mode)
