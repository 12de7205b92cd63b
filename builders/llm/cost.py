"""What a run will cost before it is paid, and a budget that stops it before it crosses a limit.

An estimate needs no network and no tokenizer download; its rules are documented approximations:

- **text**: ``ceil(characters / 4)`` per text part (OpenAI's rule of thumb for English), plus
  :data:`MESSAGE_OVERHEAD` tokens per message (role and separators);
- **images** (by model family, from the JPEG's own width and height, read from its header):
  ``openai`` (GPT-4o/4.1/o-series and any model not named below; ``detail`` high, the default for
  large images): fit in 2048x2048, shortest side down to 768, then ``85 + 170`` per 512-px tile;
  ``gemini``: 258 tokens for an image within 384x384, else 258 per 768x768 tile;
- **output**: the request's ``output_tokens`` hint, else the settings' ``max_tokens``, else
  :data:`DEFAULT_OUTPUT_TOKENS`.

Prices are per million tokens: ``--price-in``/``--price-out``, or a price table (JSON, model-name
glob -> ``{"input": ..., "output": ..., "batch": {"input": ..., "output": ...}}``; the bundled
:data:`PRICE_TABLE` is a starting point to edit, not a quote). Cost = tokens in x price in + tokens
out x price out. Under ``--llm-mode batch`` the ``batch`` prices apply (half the synchronous ones when
a table gives none, or with ``--price-in``/``--price-out``).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import fnmatch
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.arguments import existing_file
from builders.options.numbers import NON_NEGATIVE_NUMBER

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
DEFAULT_OUTPUT_TOKENS = 64
PRICE_TABLE = Path(__file__).with_name("prices.json")


def model_family(model: str) -> str:
    """``gemini`` for Gemini models, else ``openai`` (whose image rule is the documented default)."""
    return "gemini" if "gemini" in model.lower() else "openai"


def image_tokens(width: int, height: int, family: str) -> int:
    """Input tokens of one image of ``width`` x ``height`` pixels (module doc for the rules)."""
    if family == "gemini":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # start-of-frame markers (not DHT/JPG/DAC)


def jpeg_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a JPEG data URL, read from its header; None for anything else."""
    if not url.startswith("data:image/jpeg;base64,"):
        return None
    head = url[len("data:image/jpeg;base64,") :]
    for size in (4096, 65536, len(head)):
        chunk = head[: size - size % 4]
        try:
            data = base64.b64decode(chunk)
        except binascii.Error:
            return None
        found = _scan_jpeg(data)
        if found is not None:
            return found
    return None


def _scan_jpeg(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in _SOF:
            return int.from_bytes(data[i + 7 : i + 9], "big"), int.from_bytes(data[i + 5 : i + 7], "big")
        i += 2 + length
    return None


@dataclass
class Estimate:
    """Token counts of some requests (estimated) and what they would cost."""

    requests: int = 0  # to send (not in the reply cache)
    text_tokens: int = 0
    image_tokens: int = 0
    images: int = 0
    output_tokens: int = 0
    cached: int = 0  # requests the reply cache already answers (paid before, free now)

    @property
    def input_tokens(self) -> int:
        return self.text_tokens + self.image_tokens

    def add(self, other: Estimate) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def format(self, price: Price | None) -> str:
        cached = f" ({self.cached:,} more already in the reply cache)" if self.cached else ""
        line = (
            f"{self.requests:,} requests to send{cached}: input ~{self.input_tokens:,} tokens "
            f"(text {self.text_tokens:,}, {self.images:,} images {self.image_tokens:,}), "
            f"output ~{self.output_tokens:,} tokens"
        )
        if price is None:
            return line + "; no price given (--price-in/--price-out or --price-table)"
        return line + f"; about ${price.cost(self.input_tokens, self.output_tokens):,.2f} at {price}"


def estimate_request(request: Any, model: str, max_tokens: int | None = None) -> Estimate:
    """The estimated tokens of one :class:`~builders.llm.client.LLMRequest` (module doc)."""
    family = model_family(model)
    est = Estimate(requests=1)
    for message in request.messages:
        est.text_tokens += MESSAGE_OVERHEAD
        content = message.get("content")
        parts: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        for part in parts:
            if part.get("type") == "text":
                est.text_tokens += text_tokens(part["text"])
            elif part.get("type") == "image_url":
                size = jpeg_size(part["image_url"]["url"])
                est.images += 1
                est.image_tokens += image_tokens(*size, family) if size else image_tokens(512, 512, family)
    if request.schema is not None:
        est.text_tokens += text_tokens(json.dumps(_schema_json(request.schema)))
    hint = getattr(request, "output_tokens", None)
    est.output_tokens = hint or max_tokens or DEFAULT_OUTPUT_TOKENS
    return est


def _schema_json(schema: Any) -> Any:
    return schema if isinstance(schema, Mapping) else schema.model_json_schema()


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens."""

    input: float
    output: float
    batch_input: float | None = None  # the Batch API's price; None: half the synchronous one
    batch_output: float | None = None

    def for_batch(self) -> Price:
        """The price of the same tokens answered by a batch (``--llm-mode batch``)."""
        half_in, half_out = self.input / 2, self.output / 2
        return Price(self.batch_input if self.batch_input is not None else half_in,
                     self.batch_output if self.batch_output is not None else half_out)  # fmt: skip

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6

    def __str__(self) -> str:
        return f"${self.input:g} / ${self.output:g} per million tokens in / out"


def read_price_table(path: str | os.PathLike[str] = PRICE_TABLE) -> dict[str, Price]:
    """A price table: JSON object, model-name glob -> ``{"input": $, "output": $}`` per million."""
    path = Path(path)
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(table, dict):
            raise ValueError("expected a JSON object")
        return {
            str(glob): Price(
                float(p["input"]),
                float(p["output"]),
                *((float(p["batch"]["input"]), float(p["batch"]["output"])) if "batch" in p else ()),
            )  # fmt: skip
            for glob, p in table.items()
            if not str(glob).startswith("_")
        }
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a price table (model glob -> {{input, output}}): {err}") from None


def price_for(
    model: str,
    price_in: float | None = None,
    price_out: float | None = None,
    table: str | os.PathLike[str] | None = None,
) -> Price | None:
    """The price of ``model``: given prices win; else the first matching glob of ``table`` (the
    bundled one when None); else None (unknown)."""
    if price_in is not None or price_out is not None:
        if price_in is None or price_out is None:
            raise ValueError("give both --price-in and --price-out (US$ per million tokens)")
        return Price(price_in, price_out)
    for glob, price in read_price_table(table or PRICE_TABLE).items():
        if fnmatch.fnmatchcase(model.lower(), glob.lower()):
            return price
    return None


@dataclass
class Budget:
    """At most ``max_cost`` dollars at ``price``: a request is sent only if what is spent, what is in
    flight (estimated) and its own estimate stay within the budget."""

    max_cost: float
    price: Price
    model: str
    max_tokens: int | None = None
    spent: float = 0.0
    reserved: float = field(default=0.0, repr=False)
    refused: int = 0
    #: Other models sharing this budget (a two-stage evaluation's rationale model): model -> price.
    prices: dict[str, Price] = field(default_factory=dict)

    def _price(self, settings: Any) -> Price:
        model = getattr(settings, "model", None)
        return self.prices.get(model, self.price) if model else self.price

    def reserve(self, request: Any, settings: Any = None) -> float | None:
        """The estimated cost now reserved for ``request``, or None when it would cross the budget."""
        model = getattr(settings, "model", None) or self.model
        est = estimate_request(request, model, getattr(settings, "max_tokens", None) or self.max_tokens)
        cost = self._price(settings).cost(est.input_tokens, est.output_tokens)
        if self.spent + self.reserved + cost > self.max_cost:
            self.refused += 1
            return None
        self.reserved += cost
        return cost

    def settle(self, reserved: float, usage: Any, settings: Any = None) -> None:
        """Release a reservation and count what the reply really cost (its reported usage)."""
        self.reserved -= reserved
        if usage is not None:
            self.spent += self._price(settings).cost(usage.prompt_tokens, usage.completion_tokens)

    def describe(self) -> str:
        return f"spent ${self.spent:,.4f} of ${self.max_cost:,.2f}"


# -- command-line options ------------------------------------------------------------------------


def add_cost_arguments(parser: argparse.ArgumentParser) -> None:
    """``--estimate``, ``--max-cost``, ``--price-in``/``--price-out``, ``--price-table``: for every
    command that sends LLM requests (the shared prediction and build options call this)."""
    group = parser.add_argument_group(
        "cost", "what the LLM requests will cost, and a limit (module builders.llm.cost)"
    )
    group.add_argument(
        "--estimate",
        action="store_true",
        help="send nothing: count the requests still to send (items with no record yet; frames are probed, "
        "not decoded), their input tokens (text ~4 characters a token, images by the model family's rule) "
        "and expected output tokens, and price them",
    )
    group.add_argument(
        "--max-cost",
        type=NON_NEGATIVE_NUMBER,
        metavar="USD",
        help="stop cleanly before this many dollars would be spent",
    )
    group.add_argument(
        "--price-in", type=NON_NEGATIVE_NUMBER, metavar="USD", help="price per million input tokens"
    )
    group.add_argument(
        "--price-out", type=NON_NEGATIVE_NUMBER, metavar="USD", help="price per million output tokens"
    )
    group.add_argument(
        "--price-table",
        type=existing_file,
        help=f"JSON price table: model glob -> {{input, output}} (default {PRICE_TABLE.name})",
    )


def price_from_args(args: argparse.Namespace, model: str) -> Price | None:
    return price_for(model, args.price_in, args.price_out, args.price_table)


def apply_cost_arguments(args: argparse.Namespace, client: Any) -> Price | None:
    """Set up ``client`` for ``--estimate`` (its :attr:`estimate`) or ``--max-cost`` (its :attr:`budget`)
    and ``--llm-mode batch`` (its ``batch``, at the batch price); returns the price (None: unknown).
    ``--max-cost`` without a known price is an error."""
    from builders.llm.cli import apply_batch_arguments

    apply_batch_arguments(args, client)
    model = client.settings.model
    price = price_from_args(args, model)
    if price is not None and getattr(client, "batch", None) is not None:
        price = price.for_batch()
    if args.estimate:
        client.estimate = Estimate()
    if args.max_cost is not None:
        if price is None:
            raise ValueError(
                f"--max-cost needs a price for model {model!r}: pass --price-in and --price-out (US$ per "
                "million tokens) or a --price-table that lists it"
            )
        client.budget = Budget(args.max_cost, price, model, client.settings.max_tokens)
    return price


def share_cost_arguments(args: argparse.Namespace, client: Any, other: Any) -> None:
    """Let ``other`` (a second model of the same command) count into ``client``'s estimate and spend
    from its budget, at its own model's price (``--max-cost`` needs that price too)."""
    other.estimate = client.estimate
    if getattr(client, "batch", None) is not None:
        client.batch.join(other)
    if client.budget is not None:
        model = other.settings.model
        price = price_from_args(args, model) if model != client.settings.model else client.budget.price
        if price is not None and client.batch is not None and model != client.settings.model:
            price = price.for_batch()
        if price is None:
            raise ValueError(f"--max-cost needs a price for model {model!r} too: add it to a --price-table")
        client.budget.prices[model] = price
        other.budget = client.budget


def spent_line(usage: Any, price: Price | None, budget: Budget | None = None) -> str:
    """The run summary's cost line: tokens this run sent and received, and their price."""
    line = f"  spent this run: tokens in {usage.prompt_tokens:,} / out {usage.completion_tokens:,}"
    if price is not None:
        line += f", about ${price.cost(usage.prompt_tokens, usage.completion_tokens):,.4f} at {price}"
    if budget is not None and budget.refused:
        line += f"; stopped at the --max-cost budget ({budget.describe()}): rerun with a higher one to go on"
    return line
