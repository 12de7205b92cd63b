"""Credentials never reach a file, a log line or an error message: the one redaction every writer uses.

A setting can carry a secret without being one: a password in a base URL (``https://user:pw@host``),
a token among a request's extra fields (``{"api_key": ...}``, ``{"headers": {"Authorization": ...}}``),
a key in a query string (``?key=...``). :func:`redact` turns such a value into what may be recorded
(``eval.json``, ``build.json``, a release's ``meta.json``, provenance, recordings): userinfo and
secret-looking keys' values become :data:`REDACTED`. What is redacted is also remembered
(:func:`remember_secrets`), so that :func:`redact_text`, which the command line applies to every log
record (:class:`RedactingFilter`) and error it prints, removes the same strings wherever a library
echoes them. The lowest layer: no project imports.
"""

from __future__ import annotations

import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"

# Words that make a field's value a credential (a field name's words: camelCase, -, _ and . split it),
# and the word "key" (api_key, X-Goog-Api-Key, api_key_env). "tokens" (max_tokens) and "key" inside
# a longer word (monkey) are not.
_SECRET_WORDS = frozenset(
    {"authorization", "auth", "password", "passwd", "pwd", "passphrase", "secret", "token", "apikey",
     "credential", "credentials", "cookie", "signature", "bearer", "session", "sessionid"}
)  # fmt: skip
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/\s@?#]+)@")
_QUERY_PAIR = re.compile(r"([?&;])([^=&;#\s]+)=([^&;#\s]*)")
_MIN_SECRET = 4  # shorter strings are not remembered: they would redact ordinary words

_known: set[str] = set()
_lock = threading.Lock()


def is_secret_key(name: object) -> bool:
    """Whether a field named ``name`` holds a credential (``api_key``, ``X-Goog-Api-Key``, ``token``,
    ``Authorization``, ``client_secret``, ``password``...; not ``max_tokens`` or ``reasoning_effort``)."""
    words = [
        w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name)).lower()) if w
    ]
    return any(w in _SECRET_WORDS or w == "key" for w in words) or "".join(words) in _SECRET_WORDS


def redact_url(url: str) -> str:
    """``url`` without its userinfo (``user:password@``) and with secret-looking query values hidden."""
    url = _URL.sub(lambda m: f"{m.group(1)}{REDACTED}@", url)
    return _QUERY_PAIR.sub(
        lambda m: (
            f"{m.group(1)}{m.group(2)}={REDACTED if is_secret_key(urllib.parse.unquote(m.group(2))) else m.group(3)}"
        ),
        url,
    )


def redact(value: Any) -> Any:
    """A copy of ``value`` (JSON-like) fit to record: secret-looking keys' values and URL credentials hidden."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if is_secret_key(k) and v not in (None, "") else redact(v)) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value


def _secrets_in(value: Any, secret: bool = False) -> Iterable[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _secrets_in(v, secret or is_secret_key(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _secrets_in(v, secret)
    elif isinstance(value, str):
        if secret:
            yield value
            yield from value.split()[1:]  # "Bearer <token>": the token alone too
        if "://" in value:
            for m in _URL.finditer(value):
                yield urllib.parse.unquote(m.group(2))
                yield from (urllib.parse.unquote(p) for p in m.group(2).split(":"))
            for m in _QUERY_PAIR.finditer(value):
                if is_secret_key(urllib.parse.unquote(m.group(2))):
                    yield m.group(3)
                    yield urllib.parse.unquote(m.group(3))


def remember_secrets(value: Any) -> None:
    """Remember the credentials inside ``value`` (a URL, a mapping of settings): :func:`redact_text`
    removes them from any text from now on, in this process."""
    found = {s for s in _secrets_in(value) if len(s) >= _MIN_SECRET}
    if found:
        with _lock:
            _known.update(found)


def redact_text(text: str) -> str:
    """``text`` with URL userinfo and every remembered credential replaced by :data:`REDACTED`."""
    text = redact_url(text) if "://" in text else text
    with _lock:
        known = sorted(_known, key=len, reverse=True)  # a longer secret before a part of it
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class RedactingFilter(logging.Filter):
    """A handler filter applying :func:`redact_text` to the message and traceback of every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_text(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
