"""The rater's page: one static ``index.html`` with its data embedded, so it works opened from disk.

Browsers refuse ``fetch`` of a neighbouring file from a ``file://`` page, so the page data goes
inside the HTML (a JSON ``<script>`` block, with ``<`` escaped so no text can close it); the same
data is written beside it as ``study.json`` for tools. The template (``page.html``) holds all the
CSS and JavaScript, loads nothing from the network, and its content-security policy forbids it to.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from importlib.resources import files
from typing import Any

TEMPLATE = "page.html"


@lru_cache(maxsize=1)
def template() -> str:
    return files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</script>``, no ``<!--``."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(data: dict[str, Any], title: str) -> str:
    return template().replace("__TITLE__", html.escape(title)).replace("__STUDY_DATA__", embed_json(data))
