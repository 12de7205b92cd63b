"""A scripted stand-in for the LLM of the MarineLife-16K pipeline (no model anywhere: plain rules).

It is a :class:`~builders.testing.chat_server.ChatServer` handler that recognises the pipeline's
requests by their response schema name and replies deterministically from what the request carries:

- captioner (``marinelife_caption_draft``): the frames are looked up among the videos it was given
  (by the bytes of the frames the pipeline sends), and it drafts a caption from that video's
  attributes at one of four levels of completeness chosen from the video id, from complete to a
  vague one-liner, so that both the keep and the refine path occur;
- reviewer (``marinelife_caption_review_scores``): S_c is the share of the 8 dimensions whose
  attribute values the draft mentions, on 0-5 (rounded);
- refiner (``marinelife_caption_refined``): a complete caption from the attributes in the request;
- QA (``marinelife_qa_distractors``): distractors drawn from fixed marine vocabularies, seeded by the
  attributes; the check of ``central_object_motion`` by a word rule (:func:`motion_check`:
  ``movement_behavior`` that starts with another annotated object is about that object; a
  ``... while <another object> ...`` clause is cut off); for about a third of the videos the *first*
  reply is wrong on purpose (a distractor equal to the answer in other letter case, a movement given
  to another animal, or a central object's movement with a word ``movement_behavior`` lacks), and the
  re-ask (a request with the bad reply and the problem appended) gets a correct reply.

What it writes reads plausibly but is not model output; the bundled sample's recorded replies come
from it and say so.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from builders.scoring.phrases import content_words, mentions, normalized, words
from builders.scripted.chat_requests import (
    frames_digest,
    image_urls,
    message_text,
    response_schema,
    with_item_id,
)
from builders.video.frame_spec import FrameSpec
from marinelife16k.vocabulary import ATTRIBUTES, MAX_CAPTION_WORDS, SECONDARY_OBJECTS

ORGANISMS = (
    "hawksbill sea turtle", "reef manta ray", "whitetip reef shark", "giant grouper", "common octopus",
    "spotted eagle ray", "lionfish", "blue tang", "humphead wrasse", "cuttlefish", "nudibranch",
    "barracuda", "moray eel", "parrotfish", "sea star", "jellyfish", "seahorse", "sea cucumber",
    "butterflyfish", "giant clam", "spiny lobster", "dugong", "school of jacks", "anemonefish",
)  # fmt: skip
COLORS = (
    "bright yellow with black stripes", "pale grey with white spots", "deep blue with a yellow tail",
    "reddish brown with dark bands", "translucent white", "mottled green and brown", "bright orange",
    "silver with a black tail fin", "purple with orange tips", "sandy beige with dark speckles",
)  # fmt: skip
SIZES = (
    "small, round body", "very large, diamond-shaped with wide wings", "medium, long slender body",
    "tiny, tube-shaped", "large, flat disc shape", "medium, laterally compressed oval",
    "small, star-shaped with five arms", "large, bulky torpedo shape",
)  # fmt: skip
POSITIONS = (
    "full scene", "close-up of the central object", "partial view of the central object",
    "wide shot from a distance", "single viewing angle on the seabed",
)  # fmt: skip
ANGLES = (
    "eye-level, static", "high angle looking down, static", "low angle looking up, slow tilt up",
    "eye-level, panning left to right", "top-down, slow zoom out", "eye-level, tracking alongside",
)  # fmt: skip
MOVEMENTS = (
    "resting motionless on the seabed", "swimming quickly away from the camera", "hovering in place",
    "feeding on the bottom", "turning sharply and darting into cover", "drifting slowly with the current",
    "surfacing to breathe", "hiding in a crevice with only its head visible", "circling in a wide loop",
)  # fmt: skip
ENVIRONMENTS = (
    "open blue water far from the reef", "sandy seabed with scattered rocks", "kelp forest",
    "seagrass meadow", "shipwreck covered in soft corals", "deep rocky wall", "mangrove roots",
    "muddy harbour bottom",
)  # fmt: skip
LIGHTING = (
    "bright natural sunlight", "dim, deep-water light", "artificial dive light at night",
    "dappled sunlight through the surface", "overcast, flat light", "strong backlight from the surface",
)  # fmt: skip

DRAFT, REVIEW, REFINE, QA = (
    "marinelife_caption_draft", "marinelife_caption_review_scores", "marinelife_caption_refined",
    "marinelife_qa_distractors",
)  # fmt: skip
# The reviewer's 8 dimensions and the attributes each covers.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "objects": ("central_object", *SECONDARY_OBJECTS),
    "object attributes": ("texture", "color", "size_shape"),
    "environment": ("environment",),
    "lighting": ("lighting",),
    "video clarity": ("video_clarity",),
    "motion": ("movement_behavior",),
    "camera angle": ("camera_angle",),
    "camera position": ("camera_position",),
}
# Draft levels, by video: which attributes the captioner's draft leaves out.
DRAFT_LEVELS: tuple[tuple[str, ...], ...] = (
    (),  # complete
    ("lighting",),
    ("environment", "lighting", "video_clarity", "camera_position"),
    ("all",),  # a vague one-liner
)
_ATTRIBUTE_LINE = re.compile(r"- (" + "|".join(ATTRIBUTES) + r"): (.*)")
_NONE = "(none annotated)"


def pick(key: str, n: int) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16) % n


def parse_attributes(text: str) -> dict[str, str]:
    """The first block of ``- name: value`` attribute lines of a request (``(none annotated)`` -> empty)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _ATTRIBUTE_LINE.fullmatch(line)
        if match is None and found:
            break
        if match is not None:
            found[match.group(1)] = match.group(2).strip()
    return {name: "" if found.get(name, _NONE) == _NONE else found[name] for name in ATTRIBUTES}


def _article(phrase: str) -> str:
    return "An" if phrase[:1].lower() in "aeiou" else "A"


def caption_from(attributes: Mapping[str, str], leave_out: Sequence[str] = ()) -> str:
    """A one-sentence caption from the attributes, without those in ``leave_out``, under 80 words."""
    a = {k: ("" if k in leave_out else v) for k, v in attributes.items()}
    if "all" in leave_out:
        head = content_words(attributes["central_object"])[-1:] or ["animal"]
        return f"An underwater video shows a {head[0]} moving through the water."
    secondary = [a[n] for n in SECONDARY_OBJECTS if a.get(n)]
    looks = "; ".join(a[n] for n in ("size_shape", "texture", "color") if a.get(n))
    obj = a["central_object"]
    caption = f"{_article(obj)} {obj}" + (f" ({looks})" if looks else "")
    caption += f" is {a['movement_behavior']}" if a.get("movement_behavior") else " is in view"
    if secondary:
        caption += (
            ", with "
            + (
                " and ".join(secondary)
                if len(secondary) < 3
                else ", ".join(secondary[:-1]) + " and " + secondary[-1]
            )
            + " also in view"
        )
    if a.get("environment"):
        caption += f", in the {a['environment']}"
    if a.get("lighting"):
        caption += f" under {a['lighting']}"
    shot = [a[n] for n in ("video_clarity",) if a.get(n)]
    shot += [f"{a['camera_position']} shot" for _ in [0] if a.get("camera_position")]
    shot += [f"camera {a['camera_angle']}" for _ in [0] if a.get("camera_angle")]
    caption += ("; " + ", ".join(shot) if shot else "") + "."
    if len(caption.split()) >= MAX_CAPTION_WORDS and secondary:
        return caption_from(attributes, (*leave_out, *SECONDARY_OBJECTS))
    return caption


def review_score(draft: str, attributes: Mapping[str, str]) -> tuple[int, list[str]]:
    """S_c: the mean coverage of the annotated dimensions, 0-5, and the dimensions it misses."""
    coverage, missing = [], []
    for dimension, names in DIMENSIONS.items():
        values = [attributes[n] for n in names if attributes.get(n)]
        if not values:
            continue
        share = sum(_covered(draft, v) for v in values) / len(values)
        coverage.append(share)
        if share < 1:
            missing.append(dimension)
    score = round(5 * sum(coverage) / len(coverage)) if coverage else 0
    return int(score), missing


def _covered(text: str, value: str) -> bool:
    needed = content_words(value)
    present = set(content_words(text))
    return bool(needed) and sum(w in present for w in needed) / len(needed) >= 0.5


class MarineLifeResponder:
    """Handler for a :class:`ChatServer`: ``server.handler = MarineLifeResponder(rows, video_root, frames)``.

    ``rows``: the video rows whose frames it should recognise (their attributes are what its drafts
    describe; a video it does not know gets a vague draft, which the reviewer scores low); ``frames``: the frames the captioner sends of each video (the caller says which, e.g.
    ``builders.pipelines.marinelife.captioner.frame_spec()``: a double does not import what it tests).
    """

    def __init__(
        self,
        rows: Sequence[Mapping[str, Any]] = (),
        video_root: str | os.PathLike[str] = ".",
        frames: FrameSpec | None = None,
    ) -> None:
        self.videos: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            if frames is None:
                raise ValueError("MarineLifeResponder: rows to recognise need the frames the captioner sends")
            urls = frames.data_urls(Path(video_root) / row["video_path"])
            self.videos[frames_digest(urls)] = row

    def __call__(self, body: Mapping[str, Any]) -> Any:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        first_text = next((message_text(m) for m in body.get("messages", []) if m.get("role") == "user"), "")
        if name == DRAFT:
            return with_item_id(body, self.draft(body))
        if name == REVIEW:
            return with_item_id(body, self.review(first_text))
        if name == REFINE:
            return with_item_id(body, {"caption": caption_from(parse_attributes(first_text))})
        if name == QA:
            first_attempt = len(body.get("messages", [])) == 1
            return with_item_id(
                body, self.distractors(first_text, response_schema(body) or {}, first_attempt)
            )
        return None  # anything else: the server's schema-valid default

    def draft(self, body: Mapping[str, Any]) -> dict[str, str]:
        row = self.videos.get(frames_digest(image_urls(body)))
        if row is None:
            return {"caption": "An underwater video shows some marine life moving through the water."}
        attributes = {n: str(row.get(n) or "") for n in ATTRIBUTES}
        level = DRAFT_LEVELS[pick(str(row["id"]), len(DRAFT_LEVELS))]
        return {"caption": caption_from(attributes, level)}

    def review(self, text: str) -> dict[str, Any]:
        attributes = parse_attributes(text)
        draft = text.split("Draft caption:", 1)[-1].split("Reply with", 1)[0].strip()
        score, missing = review_score(draft, attributes)
        why = (
            "Matches every annotated dimension."
            if not missing
            else "Misses or contradicts: " + ", ".join(missing) + "."
        )
        return {"justification": why, "alignment": score}

    def distractors(self, text: str, schema: Mapping[str, Any], first_attempt: bool) -> dict[str, Any]:
        attributes = parse_attributes(text)
        answers = json.loads(
            text.split("Correct answers, by question type (JSON):", 1)[1].strip().splitlines()[0]
        )
        key = json.dumps(attributes, sort_keys=True)
        present = [attributes[n] for n in ("central_object", *SECONDARY_OBJECTS) if attributes[n]]
        reply: dict[str, Any] = {}
        check = motion_check(attributes) if attributes["movement_behavior"] else None
        for field in schema.get("properties", {}):
            rng = random.Random(f"{key}|{field}")
            if field == "item_id":
                continue  # the caller copies it from the request
            if field == "central_object_motion_check":
                reply[field] = dict(check or {})
            elif field == "central_object_motion":
                movement = (check or {}).get("central_object_movement", "")
                reply[field] = _others(MOVEMENTS, [movement, *present], rng) if movement else []
            elif field == "camera_object_reference":
                reply[field] = _reference(attributes)
            elif field == "central_object_appearance":
                colors = _others(COLORS, [answers[field]["color"]], rng)
                sizes = _others(SIZES, [answers[field]["size_shape"]], rng)
                reply[field] = [{"color": c, "size_shape": s} for c, s in zip(colors, sizes, strict=True)]
            elif field == "camera_motion":
                positions = _others(POSITIONS, [answers[field]["camera_position"]], rng)
                angles = _others(ANGLES, [answers[field]["camera_angle"]], rng)
                reply[field] = [
                    {"camera_position": p, "camera_angle": g} for p, g in zip(positions, angles, strict=True)
                ]
            elif field == "object_detect":
                absent = _others(ORGANISMS, present, rng)
                reply[field] = [[present[0], absent[0]], [absent[1], *present[1:2]], [absent[2], absent[0]]]
            else:
                pool = {"central_object": ORGANISMS, "environment": ENVIRONMENTS, "lighting": LIGHTING}[field]
                reply[field] = _others(pool, [answers[field], *present], rng)
        if first_attempt and pick(key, 3) == 0:
            # A deliberately invalid first reply, so the pipeline's re-ask path runs.
            kind = pick(key + "kind", 3) if reply.get("central_object_motion") else 2
            if kind == 0:
                reply["central_object_motion"][0] = "a reef shark circling the area"
            elif kind == 1:
                check = reply["central_object_motion_check"]
                check["central_object_movement"] = "gracefully " + check["central_object_movement"]
            else:
                reply["central_object"][0] = str(answers["central_object"]).upper()
        return reply


_DETERMINERS = ("a", "an", "the", "some", "two", "three", "several")


def motion_check(attributes: Mapping[str, str]) -> dict[str, Any]:
    """A word rule for "does movement_behavior describe the central object, and which words do":
    a movement that starts with another annotated object (after a determiner) is that object's; in
    "<movement> while <another object> ...", only the part before "while" is the central object's."""
    movement, central = attributes["movement_behavior"].strip(), attributes["central_object"]
    others = [attributes[n] for n in SECONDARY_OBJECTS if attributes.get(n)]
    lead = words(movement)
    lead = lead[1:] if lead[:1] and lead[0] in _DETERMINERS else lead
    for other in others:
        if words(other) and lead[: len(words(other))] == words(other):
            return {"describes_central_object": False, "subject": other, "central_object_movement": ""}
    head, sep, rest = movement.partition(" while ")
    if sep and any(mentions(rest, other) for other in others):
        movement = head.strip(" ,;")
    return {"describes_central_object": True, "subject": central, "central_object_movement": movement}


def _others(pool: Sequence[str], avoid: Sequence[str], rng: random.Random) -> list[str]:
    """Three pool entries that are not (a shorter or longer name of) anything in ``avoid``."""
    usable = [
        p
        for p in pool
        if not any(normalized(p) == normalized(a) or mentions(p, a) or mentions(a, p) for a in avoid if a)
    ]
    return rng.sample(usable, 3)


def _reference(attributes: Mapping[str, str]) -> str:
    activity = attributes.get("movement_behavior") or "in view"
    return (
        f"The camera, framing the {attributes['camera_position']} at {attributes['camera_angle']}, "
        f"captures the {attributes['central_object']} {activity}."
    )
