"""How to reach one OpenAI-compatible endpoint: a small, secret-free settings object.

The API key itself is never stored here: ``api_key_env`` holds the *name* of the environment
variable, read at call time (:meth:`LLMSettings.read_api_key`). So a settings object can be
printed, logged, hashed into a cache key or written to a dataset card without leaking anything.

Every setting is an explicit field (and a ``--llm-*`` flag, :mod:`builders.llm.cli`); environment
variables are only defaults, read in one place, :meth:`LLMSettings.from_env`, and never written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from builders.files.redact import redact, remember_secrets
from builders.llm.cli import LLM_ENV_PREFIX, NONE

# The settings that change a reply, hence part of every cache key (with the messages and schema).
CACHE_IDENTITY_FIELDS: tuple[str, ...] = (
    "model",
    "base_url",
    "temperature",
    "seed",
    "max_tokens",
    "extra_body",
)
# The fields that ``none`` switches off (their value None means "not sent" or "no key").
OPTIONAL_FIELDS: tuple[str, ...] = ("api_key_env", "temperature", "seed", "max_tokens", "extra_body")


class LLMSettings(BaseModel):
    """Endpoint, model and sampling settings for :class:`~builders.llm.LLMClient`.

    Works with OpenAI (``https://api.openai.com/v1``), Gemini's OpenAI-compatible endpoint
    (``https://generativelanguage.googleapis.com/v1beta/openai/``), vLLM and Ollama
    (``http://localhost:11434/v1``; local servers need no key: set ``api_key_env`` to ``None``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model: str = Field(description="model id sent to the server, e.g. 'gemini-2.5-flash'")
    base_url: str = Field("https://api.openai.com/v1", description="OpenAI-compatible base URL")
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", description="NAME of the environment variable holding the key (None: no key)"
    )
    max_concurrency: int = Field(8, ge=1, description="requests in flight at once")
    timeout: float = Field(
        120.0, gt=0, description="seconds per HTTP attempt, all of it: connect, headers and the whole body"
    )
    max_retries: int = Field(4, ge=0, description="the SDK's retries on 408/409/429/5xx/timeouts")
    max_validation_retries: int = Field(
        2, ge=0, description="re-asks after a reply that fails parsing/validation or is truncated"
    )
    temperature: float | None = Field(0.0, description="None: the server's default")
    seed: int | None = Field(0, description="None: not sent")
    max_tokens: int | None = Field(None, ge=1, description="reply length limit (None: server default)")
    extra_body: dict[str, Any] | None = Field(
        None, description="provider-specific request fields, e.g. {'reasoning_effort': 'low'}"
    )
    max_reply_mb: float = Field(
        16.0, gt=0, description="largest reply body read, in MB; a longer one fails at once (never retried)"
    )
    progress: bool = Field(
        True, description="show progress: a tqdm bar on a terminal, else a plain line every 10 s"
    )

    def worst_case_seconds(self) -> float:
        """The longest one item can take before it is reported failed: every attempt (1 + re-asks)
        spends every SDK try (1 + retries) up to the timeout, plus the SDK's backoff between tries
        (0.5 s doubling, at most 8 s)."""
        backoff = sum(min(0.5 * 2**i, 8.0) for i in range(self.max_retries))
        return (self.max_validation_retries + 1) * ((self.max_retries + 1) * self.timeout + backoff)

    def worst_case_note(self) -> str:
        return (
            f"worst-case wait per item: {self.worst_case_seconds() / 60:.1f} min ({self.max_validation_retries + 1} "
            f"attempt(s) x {self.max_retries + 1} HTTP tries x {self.timeout:g} s timeout, plus backoff); "
            "--llm-timeout and --llm-max-retries shorten it"
        )

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        # "…/v1" and "…/v1/" are the same endpoint; one spelling keeps cache keys stable.
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _looks_like_a_name(cls, value: str | None) -> str | None:
        # Catch the classic mistake of pasting the key itself where its variable name belongs,
        # without echoing the value back in the error.
        if value is not None and (not value or not all(c.isalnum() or c == "_" for c in value)):
            raise ValueError("api_key_env must be the NAME of an environment variable (letters, digits, _)")
        return value

    def model_post_init(self, context: Any, /) -> None:
        # Credentials inside settings (a URL's password, a token in extra_body) are scrubbed from any
        # log line or error from now on; cache_identity() never holds them.
        remember_secrets({"base_url": self.base_url, "extra_body": self.extra_body})

    def cache_identity(self) -> dict[str, Any]:
        """The settings that enter the reply cache key, as plain JSON with every credential redacted
        (a URL's userinfo, secret-looking ``extra_body`` fields: :func:`builders.files.redact.redact`):
        what a work folder, a release or a recording records, and what a changed key leaves alone."""
        return redact(
            json.loads(json.dumps(self.model_dump(include=set(CACHE_IDENTITY_FIELDS)), sort_keys=True))
        )

    def read_api_key(self) -> str:
        """The key from the environment, now; a missing variable is a clear error (no value shown)."""
        if self.api_key_env is None:
            return "unused"  # local servers ignore it; the SDK insists on a non-empty string
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RuntimeError(
                f"environment variable {self.api_key_env} (named by api_key_env) is not set or empty; "
                f"export the API key for {self.base_url} there, or, for a keyless local server like "
                f"vLLM or Ollama, set api_key_env to none (--llm-api-key-env none on the command line, "
                f'api_key_env="none" in Python)'
            )
        return key

    @classmethod
    def from_env(
        cls,
        prefix: str = LLM_ENV_PREFIX,
        environ: Mapping[str, str] | None = None,
        *,
        caller: str = "cli",
        **overrides: Any,
    ) -> LLMSettings:
        """Settings from explicit values, with ``<prefix><FIELD>`` environment variables as defaults.

        The one place the environment is read for settings. Keyword ``overrides`` that are not None
        win; a field given neither way falls back to ``<prefix><FIELD>`` (``VQABENCH_LLM_MODEL``,
        ``VQABENCH_LLM_BASE_URL``, ``VQABENCH_LLM_API_KEY_ENV``, ``VQABENCH_LLM_MAX_CONCURRENCY``,
        ``..._TIMEOUT``, ``..._MAX_RETRIES``, ``..._MAX_VALIDATION_RETRIES``, ``..._TEMPERATURE``,
        ``..._SEED``, ``..._MAX_TOKENS``, ``..._EXTRA_BODY`` as JSON, ``..._PROGRESS``; judges use
        ``VQABENCH_JUDGE_``), then to the field's default. ``none`` (or empty), as a variable or an
        override, switches an optional setting off: no key (``api_key_env``, for keyless local
        servers like vLLM or Ollama), the server's default ``temperature`` or ``max_tokens``, no
        ``seed``, no ``extra_body``. ``environ`` (default ``os.environ``) is only read. ``caller``
        (``"cli"``, ``"python"`` or ``"environment"``) words the errors for whoever gave the overrides: a
        flag, an argument, or nothing but the variables (a harness that has no flags for them).
        """
        values = _env_values(cls.model_fields, prefix, os.environ if environ is None else environ)
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in OPTIONAL_FIELDS:
            if _is_none(values.get(name)):
                values[name] = None
        if not values.get("model"):
            how = {"python": "pass model=... ", "environment": ""}.get(caller, "pass --llm-model MODEL ")
            raise ValueError(f"no model configured: {how}or set {prefix}MODEL")
        return cls(**values)

    def derive(self, prefix: str, environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """These settings with ``<prefix><FIELD>`` variables, then the ``overrides`` that are not None,
        on top (``none`` switches an optional setting off): a second model of one command, e.g. the
        one that writes a two-stage evaluation's rationales."""
        values = self.model_dump()
        values.update(
            _env_values(type(self).model_fields, prefix, os.environ if environ is None else environ)
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in OPTIONAL_FIELDS:
            if _is_none(values.get(name)):
                values[name] = None
        return type(self)(**values)


def _env_values(fields: Any, prefix: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``<prefix><FIELD>`` variables that are set, as field values (``EXTRA_BODY`` parsed as JSON)."""
    values: dict[str, Any] = {}
    for name in fields:
        raw = environ.get(prefix + name.upper())
        if raw is None:
            continue
        if name == "extra_body" and not _is_none(raw):
            try:
                values[name] = json.loads(raw)
            except json.JSONDecodeError as err:
                raise ValueError(f"{prefix}EXTRA_BODY is not valid JSON: {err}") from None
        else:
            values[name] = raw
    return values


def _is_none(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("", NONE)
