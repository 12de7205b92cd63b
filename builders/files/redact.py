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

import base64
import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"

# Deny by default: a field name is a credential when one of its words (camelCase, -, _ and . split it)
# is one of these, or ends with a credential word (``apitoken``, ``accesstoken``, ``clientsecret``,
# ``x_api_key``...). "tokens" (max_tokens) and "key" inside an ordinary word (monkey, turkey) are not.
_SECRET_WORDS = frozenset(
    {"authorization", "auth", "password", "passwd", "pwd", "pass", "pw", "passphrase", "secret", "token",
     "key", "apikey", "credential", "credentials", "cookie", "signature", "sig", "bearer", "session",
     "sessionid", "jwt", "otp", "privatekey"}
)  # fmt: skip
_SECRET_ENDINGS = ("token", "secret", "password", "passwd", "apikey", "accesskey", "secretkey", "privatekey",
                   "signature", "credential", "credentials", "cookie", "jwt", "sessionid")  # fmt: skip
# Query parameters whose values are known to be ordinary (every other value is redacted), and headers
# whose values are (every other one is).
_SAFE_QUERY = frozenset(
    {"alt", "api-version", "version", "revision", "ref", "model", "format", "limit", "offset", "page", "split",
     "config", "expand", "full", "recursive", "create_pr", "search", "author", "filter", "sort", "direction",
     "download"}
)  # fmt: skip
_SAFE_HEADERS = frozenset(
    {"content-type", "accept", "accept-encoding", "accept-language", "user-agent", "content-length",
     "openai-beta", "openai-organization", "openai-project", "x-stainless-retry-count", "anthropic-version",
     "http-referer", "x-title"}
)  # fmt: skip
# Values shaped like a known credential, whatever field holds them: OpenAI (sk-...), Google (AIza...),
# Hugging Face (hf_...), GitHub (ghp_, gho_, ghs_, ghu_, github_pat_), Slack (xox.-), AWS (AKIA...),
# a JWT (three base64url parts, the first two JSON objects), an HTTP Bearer or Basic credential.
_SECRET_VALUE = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}|\bAIza[0-9A-Za-z_\-]{30,}|\bhf_[A-Za-z0-9]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[abprs]-[A-Za-z0-9\-]{10,}|\bAKIA[0-9A-Z]{16}\b"
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+"
    r"|(?<=\bBearer )[^\s\"',]+|(?<=\bBasic )(?=[A-Za-z+/]*[0-9=])[A-Za-z0-9+/]{8,}={0,2}",
)
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/\s@?#]+)@")
_QUERY_PAIR = re.compile(r"([?&;])([^=&;#\s]+)=([^&;#\s]*)")
_FRAGMENT = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s#]*)#([^\s\"']+)")
_MIN_SECRET = 4  # shorter strings are not remembered: they would redact ordinary words

_known: set[str] = set()
_lock = threading.Lock()


def _words(name: object) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name)).lower()
    return [w for w in re.split(r"[^a-z0-9]+", spaced) if w]


def is_secret_key(name: object) -> bool:
    """Whether a field named ``name`` holds a credential, in any spelling (``api_key``, ``X-Goog-Api-Key``,
    ``apitoken``, ``accessToken``, ``pass``, ``pw``, ``jwt``, ``sig``, ``client_secret``...; not
    ``max_tokens`` or ``reasoning_effort``)."""
    words = _words(name)
    joined = "".join(words)
    return (
        any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words)
        or joined in _SECRET_WORDS
        or joined.endswith(_SECRET_ENDINGS)
    )


def _secret_query(name: str) -> bool:
    return urllib.parse.unquote(name).lower() not in _SAFE_QUERY


def redact_url(url: str) -> str:
    """``url`` without its userinfo (``user:password@``) and fragment, and with every query value
    hidden but those of known-ordinary parameters (``alt``, ``api-version``, ``revision``...)."""
    url = _URL.sub(lambda m: f"{m.group(1)}{REDACTED}@", url)
    url = _FRAGMENT.sub(lambda m: f"{m.group(1)}#{REDACTED}", url)
    return _QUERY_PAIR.sub(
        lambda m: f"{m.group(1)}{m.group(2)}={REDACTED if _secret_query(m.group(2)) else m.group(3)}", url
    )


def without_userinfo(url: str) -> str:
    """``url`` with no ``user:password@``: what is sent, so that no HTTP client turns it into a Basic
    ``Authorization`` header nobody asked for."""
    return _URL.sub(lambda m: m.group(1), url, count=1)


def _redact_string(value: str) -> str:
    value = redact_url(value) if "://" in value else value
    return _SECRET_VALUE.sub(REDACTED, value)


def redact(value: Any, *, _headers: bool = False) -> Any:
    """A copy of ``value`` (JSON-like) fit to record, deny by default: secret-looking keys' values,
    header values (under a ``headers`` key) but known-ordinary ones, URL credentials, query values and
    fragments, and values shaped like a known key format (``sk-``, ``AIza``, ``hf_``, ``ghp_``, a JWT,
    ``Bearer ...``) hidden."""
    if isinstance(value, Mapping):
        return {
            k: (
                REDACTED
                if v not in (None, "")
                and (is_secret_key(k) or (_headers and str(k).lower() not in _SAFE_HEADERS))
                else redact(v, _headers=_words(k) == ["headers"])
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _redact_string(value)
    return value


def _secrets_in(value: Any, secret: bool = False, headers: bool = False) -> Iterable[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            hidden = secret or is_secret_key(k) or (headers and str(k).lower() not in _SAFE_HEADERS)
            yield from _secrets_in(v, hidden, _words(k) == ["headers"])
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
                userinfo = urllib.parse.unquote(m.group(2))
                yield base64.b64encode(userinfo.encode()).decode()  # as an HTTP Basic header would carry it
            for m in _QUERY_PAIR.finditer(value):
                if _secret_query(m.group(2)):
                    yield m.group(3)
                    yield urllib.parse.unquote(m.group(3))
            for m in _FRAGMENT.finditer(value):
                yield m.group(2)
                yield from (p.partition("=")[2] for p in m.group(2).split("&"))


def remember_secrets(value: Any) -> None:
    """Remember the credentials inside ``value`` (a URL, a mapping of settings): :func:`redact_text`
    removes them from any text from now on, in this process."""
    found = {s for s in _secrets_in(value) if len(s) >= _MIN_SECRET}
    if found:
        with _lock:
            _known.update(found)


def redact_text(text: str) -> str:
    """``text`` with URL userinfo, query values and fragments, values shaped like a known key format,
    and every remembered credential replaced by :data:`REDACTED`."""
    text = _redact_string(text)
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
