"""Regenerate the bundled MarineLife-16K sample (deterministic): ``python -m builders.testing.samples.make_marinelife_sample``.

Writes, next to this file (or under ``--out``):

* ``videos/<collection>/<video_file>`` - 24 short real H.264 MP4 clips written with PyAV (128x96,
  25 fps, 3-5 s; synthetic pictures: a scrolling texture for moving-camera videos, a moving square
  for static ones). They stand in for the real footage, which is not redistributable here.
* ``attributes.csv`` - the expert attribute rows of those videos (realistic values written for the
  sample; some videos lack lighting, environment or movement so the conditional types vary) with
  their final captions.
* ``qa.jsonl`` - the sample's ground-truth QA records, assembled by :mod:`marinelife16k.questions`
  with hand-written distractor pools and hand-written decisions of type 7 (no LLM), and validated.
  Two videos' ``movement_behavior`` describes another object (no ``central_object_motion``), one
  describes the central object and another (its answer is the central object's part).
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Sequence
from pathlib import Path

from builders.files.jsonio import dumps_line
from builders.testing.clips import write_clip
from marinelife16k.annotations import read_annotations
from marinelife16k.questions import assemble_records
from marinelife16k.sample import sample_root
from marinelife16k.schema import check_records
from marinelife16k.vocabulary import ATTRIBUTES, MOVING, SECONDARY_OBJECTS

SEED = 0
WIDTH, HEIGHT, FPS = 128, 96, 25

# (collection, video_id, 13 attributes in ATTRIBUTES order, caption, the central object's movement cut out of
# movement_behavior (default: all of it; "" when movement_behavior describes another object: no type 7
# question), three wrong movements/states).
VIDEOS: list[dict] = [
    dict(
        collection="MVK", video_id="mvk-0103",
        attrs=("green sea turtle", "hard coral", "yellow tang", "", "patterned scutes", "olive green with brown patches",
               "large, oval shell", "shallow coral reef", "bright natural sunlight", "clear",
               "swimming slowly forward with steady flipper strokes", "full scene",
               "eye-level, tracking the turtle from the side"),
        caption="A large green sea turtle with an oval, olive-green shell of patterned brown-patched scutes swims slowly "
                "forward with steady flipper strokes over a shallow coral reef of hard coral, passing a yellow tang, in "
                "bright natural sunlight and clear water, filmed as a full scene at eye level while the camera tracks "
                "the turtle from the side.",
        wrong=("resting motionless on the reef with flippers tucked in", "surfacing quickly to breathe",
               "biting pieces off a sponge"),
    ),
    dict(
        collection="MVK", video_id="mvk-0117",
        attrs=("school of bigeye trevally", "diver", "", "", "smooth, silvery scales", "silver with dark fins",
               "medium, streamlined torpedo shape", "open water above a sandy slope",
               "natural light filtered from the surface", "slightly blurry", "schooling in a slow circular vortex",
               "full scene", "low angle looking up, static"),
        caption="A school of medium, streamlined, silver bigeye trevally with smooth scales and dark fins circles in a "
                "slow vortex in open water above a sandy slope while a diver watches, lit by natural light filtered "
                "from the surface; the slightly blurry footage shows the full scene from a static low angle looking up.",
        wrong=("scattering in all directions from a predator", "resting near the seabed in a loose group",
               "swimming in a straight line towards the surface"),
    ),
    dict(
        collection="MVK", video_id="mvk-0125",
        attrs=("clownfish", "magnificent sea anemone", "", "", "smooth skin",
               "orange with three white bands edged in black", "small, oval body", "reef slope", "", "clear",
               "darting in and out of the anemone tentacles", "close-up of the central object", "eye-level, static"),
        caption="A small, oval clownfish with smooth orange skin and three black-edged white bands darts in and out of "
                "the tentacles of a magnificent sea anemone on a reef slope, shown in a clear close-up of the fish from "
                "a static eye-level camera.",
        wrong=("hiding motionless deep inside the anemone", "swimming away from the anemone into open water",
               "chasing a damselfish across the reef"),
    ),
    dict(
        collection="MVK", video_id="mvk-0131",
        attrs=("giant moray eel", "rock crevice", "cleaner shrimp", "", "smooth, mottled skin",
               "brown with yellow-green speckles", "large, elongated snake-like body", "rocky reef",
               "dim, artificial dive light", "clear", "resting in a crevice while a cleaner shrimp picks at its teeth",
               "partial view of the central object (head only)", "eye-level, slow zoom in"),
        caption="The head of a large giant moray eel with smooth, mottled brown skin speckled yellow-green rests in a "
                "rock crevice on a rocky reef while a cleaner shrimp picks at its teeth, under dim artificial dive "
                "light; the clear footage shows only the head at eye level as the camera slowly zooms in.",
        motion="resting in a crevice",
        wrong=("swimming in the open across the reef", "striking at a passing fish",
               "retreating backwards out of sight into the crevice"),
    ),
    dict(
        collection="MVK", video_id="mvk-0142",
        attrs=("blue-spotted stingray", "sandy seabed", "", "", "smooth skin", "tan with bright blue spots",
               "medium, flat round disc with a tapering tail", "sandy lagoon floor", "bright natural sunlight",
               "clear", "", "single viewing angle", "top-down, static"),
        caption="A medium blue-spotted stingray with a smooth, flat round tan disc covered in bright blue spots and a "
                "tapering tail lies on the sandy seabed of a lagoon floor in bright natural sunlight, seen clearly "
                "from a single top-down viewing angle with a static camera.",
        wrong=(),
    ),
    dict(
        collection="MVK", video_id="mvk-0150",
        attrs=("table coral", "damselfish", "sea urchin", "brain coral", "rough, branching plates", "pale brown",
               "large, flat table-like shape", "shallow coral reef", "bright sunlight with caustic patterns", "clear",
               "damselfish darting in and out of the branches", "full scene", "high angle, slow pan to the right"),
        caption="A large, flat table coral of rough, pale brown branching plates spreads over a shallow coral reef "
                "while damselfish dart in and out of its branches near a sea urchin and a brain coral, under bright "
                "sunlight with caustic patterns; the clear full-scene shot looks down from a high angle while the "
                "camera pans slowly to the right.",
        motion="",  # movement_behavior describes the damselfish: no central_object_motion question
        wrong=(),
    ),
    dict(
        collection="MVK", video_id="mvk-0158",
        attrs=("lionfish", "soft coral", "", "", "feathery fins and spines", "red and white stripes",
               "medium, fan-like with long spines", "", "dim natural light", "slightly blurry",
               "hovering in place while spreading its pectoral fins", "close-up of the central object",
               "eye-level, static"),
        caption="A medium lionfish striped red and white, with feathery fan-like fins and long spines, hovers in place "
                "beside soft coral while spreading its pectoral fins in dim natural light; the slightly blurry close-up "
                "is filmed from a static camera at eye level.",
        wrong=("swimming quickly away over the reef", "lying on the seabed with fins folded",
               "swallowing a small fish in one strike"),
    ),
    dict(
        collection="MVK", video_id="mvk-0166",
        attrs=("scuba diver", "school of fusiliers", "sea fan", "", "neoprene wetsuit",
               "black wetsuit with a yellow tank", "human-sized, upright body", "reef wall",
               "natural light from above", "clear", "finning slowly along the reef wall", "full scene",
               "eye-level, following the diver from behind"),
        caption="A scuba diver in a black neoprene wetsuit with a yellow tank fins slowly along a reef wall decorated "
                "with a sea fan as a school of fusiliers passes, lit by natural light from above; the clear full-scene "
                "shot follows the diver from behind at eye level.",
        wrong=("kneeling motionless on the sand", "ascending quickly towards the surface",
               "photographing the sea fan while hovering"),
    ),
    dict(
        collection="MVK", video_id="mvk-0174",
        attrs=("seagrass", "juvenile rabbitfish", "", "", "thin ribbon-like blades", "bright green",
               "long, narrow blades", "seagrass meadow", "", "clear", "swaying back and forth with the current",
               "full scene", "low angle, static"),
        caption="Long, narrow, bright green seagrass blades with a thin ribbon-like texture sway back and forth with "
                "the current in a seagrass meadow where juvenile rabbitfish graze, shown clearly as a full scene from a "
                "static low-angle camera.",
        wrong=("lying flat and still on the seabed", "being uprooted and drifting away",
               "bending in one direction under a strong surge"),
    ),
    dict(
        collection="MVK", video_id="mvk-0181",
        attrs=("octopus", "rubble", "", "", "bumpy, wrinkled skin", "mottled reddish brown, shifting to pale",
               "medium, soft body with eight arms", "rubble patch", "natural light", "clear",
               "crawling over rubble while changing color for camouflage", "single viewing angle",
               "high angle, tilting down to follow the octopus"),
        caption="A medium octopus with bumpy, wrinkled, mottled reddish-brown skin crawls over a rubble patch, shifting "
                "to pale as it changes color for camouflage in natural light; the clear shot keeps a single viewing "
                "angle from above, tilting down to follow the octopus.",
        wrong=("jetting away in a cloud of ink", "hiding motionless inside a shell",
               "swimming in open water with arms trailing"),
    ),
    dict(
        collection="MVK", video_id="mvk-0189",
        attrs=("barracuda", "", "", "", "smooth scales", "silver with dark bars", "large, long slender body",
               "open blue water", "", "blurry", "", "full scene", "eye-level, static"),
        caption="A large barracuda with a long, slender body of smooth silver scales marked by dark bars appears in "
                "open blue water in blurry footage, filmed as a full scene from a static eye-level camera.",
        wrong=(),
    ),
    dict(
        collection="MVK", video_id="mvk-0196",
        attrs=("sea cucumber", "sand", "brittle star", "", "leathery, warty skin", "black", "medium, sausage-shaped",
               "sandy seabed", "dim natural light", "clear", "lying still on the sand, feeding through its tentacles",
               "close-up of the central object", "top-down, dolly forward along the body"),
        caption="A medium, sausage-shaped black sea cucumber with leathery, warty skin lies still on the sandy seabed "
                "feeding through its tentacles near a brittle star in dim natural light; the clear top-down close-up "
                "dollies forward along its body.",
        wrong=("rolling across the sand with the current", "climbing up a coral head",
               "contracting sharply and expelling water"),
    ),
    dict(
        collection="MSC", video_id="msc-0007",
        attrs=("hawksbill turtle", "sponge", "soft coral", "", "overlapping patterned scutes", "amber and brown",
               "large, heart-shaped shell", "coral reef", "bright natural sunlight", "clear",
               "biting and chewing a sponge", "close-up of the central object", "eye-level, static"),
        caption="A large hawksbill turtle with a heart-shaped shell of overlapping amber and brown patterned scutes bites "
                "and chews a sponge among soft coral on a coral reef in bright natural sunlight, seen in a clear "
                "close-up from a static eye-level camera.",
        wrong=("swimming away over the reef", "sleeping under a ledge", "surfacing to breathe"),
    ),
    dict(
        collection="MSC", video_id="msc-0012",
        attrs=("manta ray", "remora", "diver", "", "smooth skin", "black back with white underside",
               "very large, diamond-shaped with wide wings", "cleaning station above a reef",
               "natural light from above", "clear", "gliding in a slow loop with mouth open to filter-feed",
               "full scene", "low angle, panning left to follow the ray"),
        caption="A very large, diamond-shaped manta ray with smooth skin, a black back and white underside glides in a "
                "slow loop with its mouth open to filter-feed over a cleaning station above a reef, with a remora "
                "attached and a diver nearby, in natural light from above; the clear full scene is filmed from a low "
                "angle, panning left to follow the ray.",
        wrong=("resting flat on the sandy bottom", "breaching out of the water",
               "flapping rapidly to escape from the diver"),
    ),
    dict(
        collection="MSC", video_id="msc-0019",
        attrs=("pufferfish", "", "", "", "spiny skin", "yellow-brown with white spots", "small, round inflated body",
               "reef flat", "", "slightly blurry", "inflating its body into a ball", "close-up of the central object",
               "eye-level, static"),
        caption="A small yellow-brown pufferfish with spiny, white-spotted skin inflates its body into a round ball on "
                "a reef flat, shown in a slightly blurry close-up from a static eye-level camera.",
        wrong=("swimming slowly with its body deflated", "hiding under a coral ledge",
               "nibbling algae off a rock"),
    ),
    dict(
        collection="MSC", video_id="msc-0023",
        attrs=("reef shark", "school of snappers", "hard coral", "", "smooth skin", "grey with white-tipped fins",
               "large, streamlined torpedo shape", "reef edge", "natural light", "clear",
               "patrolling along the reef edge with slow tail beats", "full scene", "eye-level, static"),
        caption="A large, streamlined reef shark with smooth grey skin and white-tipped fins patrols along the reef "
                "edge with slow tail beats past a school of snappers and hard coral in natural light, in a clear "
                "full scene filmed from a static eye-level camera.",
        wrong=("resting motionless on the sand", "attacking the school of snappers",
               "swimming quickly towards the camera"),
    ),
    dict(
        collection="MSC", video_id="msc-0028",
        attrs=("cuttlefish", "seaweed", "", "", "smooth skin with ridged fins", "brown with pulsing white stripes",
               "medium, oval body with short arms", "kelp forest edge", "dim natural light", "clear",
               "hovering and rippling its fins while flashing color bands", "single viewing angle",
               "eye-level, slow tracking shot"),
        caption="A medium cuttlefish with an oval body, short arms and smooth brown skin with pulsing white stripes "
                "hovers at the edge of a kelp forest, rippling its fins and flashing color bands beside seaweed in dim "
                "natural light; the clear shot keeps a single eye-level viewing angle in a slow tracking move.",
        wrong=("burying itself in the sand", "shooting out its tentacles to catch a shrimp",
               "jetting backwards in a cloud of ink"),
    ),
    dict(
        collection="MSC", video_id="msc-0034",
        attrs=("nudibranch", "encrusting sponge", "", "", "smooth, soft body with frilly gills",
               "purple with orange gills", "tiny, elongated slug-like body", "", "artificial dive light", "clear",
               "crawling slowly over the sponge", "close-up of the central object", "macro, static"),
        caption="A tiny purple nudibranch with a smooth, soft, elongated slug-like body and frilly orange gills crawls "
                "slowly over an encrusting sponge under artificial dive light, in a clear static macro close-up.",
        wrong=("swimming freely in the water column", "curled up motionless under a rock",
               "laying a ribbon of eggs on the sponge"),
    ),
    dict(
        collection="MSC", video_id="msc-0041",
        attrs=("giant clam", "staghorn coral", "", "", "fluted, wavy shell", "iridescent blue mantle",
               "large, wavy-edged oval shell", "shallow reef flat", "bright natural sunlight", "clear", "",
               "partial view of the central object", "top-down, static"),
        caption="A large giant clam with a fluted, wavy-edged oval shell and an iridescent blue mantle sits among "
                "staghorn coral on a shallow reef flat in bright natural sunlight, in a clear, static top-down partial "
                "view of the clam.",
        wrong=(),
    ),
    dict(
        collection="MSC", video_id="msc-0047",
        attrs=("school of yellowfin goatfish", "sandy seabed", "diver", "", "smooth scales",
               "white with a yellow lateral stripe", "small to medium, elongated bodies", "sandy channel",
               "natural light", "slightly blurry", "foraging together, probing the sand with their barbels",
               "full scene", "high angle, handheld drift over the school"),
        caption="A school of small to medium yellowfin goatfish with elongated, smooth white bodies and a yellow lateral "
                "stripe forages together in a sandy channel, probing the sandy seabed with their barbels while a diver "
                "looks on in natural light; the slightly blurry full scene is shot from a high angle in a handheld "
                "drift over the school.",
        wrong=("hovering motionless in mid-water", "fleeing from the diver in a tight ball",
               "resting on the sand with barbels folded"),
    ),
    dict(
        collection="MSC", video_id="msc-0052",
        attrs=("kelp", "garibaldi", "sea urchin", "", "leathery fronds", "golden brown", "tall, long fronds",
               "kelp forest", "sunbeams through the canopy", "clear", "a garibaldi hovering between the fronds", "full scene",
               "low angle, slow tilt up toward the surface"),
        caption="Tall golden-brown kelp with long, leathery fronds rises through a kelp forest where a garibaldi hovers "
                "between the fronds above a sea urchin, lit by sunbeams through the canopy; the clear full scene starts "
                "at a low angle and slowly tilts up toward the surface.",
        motion="",  # movement_behavior describes the garibaldi: no central_object_motion question
        wrong=(),
    ),
    dict(
        collection="MSC", video_id="msc-0058",
        attrs=("frogfish", "sponge", "", "", "warty, lumpy skin", "yellow", "small, round lumpy body", "muck site", "",
               "clear", "sitting motionless, camouflaged against the sponge", "close-up of the central object",
               "eye-level, static"),
        caption="A small yellow frogfish with a round, lumpy body and warty skin sits motionless at a muck site, "
                "camouflaged against a sponge, in a clear close-up from a static eye-level camera.",
        wrong=("walking across the sand on its pectoral fins", "swallowing a passing fish in a fast gulp",
               "swimming away with quick tail beats"),
    ),
    dict(
        collection="MSC", video_id="msc-0063",
        attrs=("whale shark", "remora", "diver", "school of small fish", "rough skin with a spotted pattern",
               "dark grey-blue with white spots", "very large, broad flat head and long body",
               "open ocean near the surface", "bright natural light from the surface", "slightly blurry",
               "swimming slowly with its mouth open, filter-feeding", "full scene",
               "eye-level, swimming alongside and tracking the shark"),
        caption="A very large whale shark with a broad flat head, long body and rough dark grey-blue skin patterned "
                "with white spots swims slowly with its mouth open, filter-feeding in the open ocean near the surface "
                "alongside a remora, a diver and a school of small fish, in bright natural light; the slightly blurry "
                "full scene is filmed at eye level while the camera swims alongside, tracking the shark.",
        wrong=("diving steeply into deep water", "resting motionless near the surface",
               "turning sharply to chase the diver"),
    ),
    dict(
        collection="MSC", video_id="msc-0069",
        attrs=("sea star", "mussels", "", "", "rough, knobby skin", "orange", "medium, five-armed star shape",
               "rocky tide pool", "dim light", "clear", "", "single viewing angle", "top-down, static"),
        caption="A medium orange sea star with rough, knobby skin and five arms clings among mussels in a rocky tide "
                "pool in dim light, seen clearly from a single static top-down viewing angle.",
        wrong=(),
    ),
]  # fmt: skip

# Pools for the other distractors: plausible values of the same kind, never the video's own.
CENTRAL_OBJECTS = (
    "green sea turtle", "hawksbill turtle", "clownfish", "lionfish", "manta ray", "blue-spotted stingray",
    "reef shark", "whale shark", "barracuda", "octopus", "cuttlefish", "nudibranch", "sea cucumber", "sea star",
    "giant clam", "table coral", "brain coral", "sea fan", "kelp", "seagrass", "scuba diver", "pufferfish",
    "frogfish", "giant moray eel", "school of bigeye trevally", "school of yellowfin goatfish", "parrotfish",
    "jellyfish", "seahorse", "moorish idol", "sea urchin", "spiny lobster",
)  # fmt: skip
OBJECTS = (
    "parrotfish", "jellyfish", "seahorse", "spiny lobster", "sea urchin", "brain coral", "sea fan", "diver",
    "damselfish", "remora", "seagrass", "kelp", "sponge", "soft coral", "hard coral", "moorish idol", "octopus",
    "sea turtle", "anemone", "reef shark", "school of snappers", "mussels", "shipwreck", "plastic bag",
)  # fmt: skip
COLORS = (
    "bright yellow", "silver with dark fins", "olive green with brown patches", "orange with white bands",
    "purple with orange gills", "black", "pale brown", "red and white stripes", "grey with white-tipped fins",
    "tan with bright blue spots", "golden brown", "iridescent blue", "mottled green and grey",
)  # fmt: skip
SIZE_SHAPES = (
    "small, round body", "large, oval shell", "medium, streamlined torpedo shape", "tiny, elongated body",
    "very large, diamond-shaped with wide wings", "large, flat table-like shape", "medium, five-armed star shape",
    "long, narrow blades", "large, long slender body", "small, laterally compressed disc",
)  # fmt: skip
CAMERA_POSITIONS = (
    "full scene",
    "close-up of the central object",
    "single viewing angle",
    "partial view of the central object",
)
CAMERA_ANGLES = (
    "eye-level, static", "top-down, static", "low angle looking up, static", "eye-level, slow pan to the left",
    "high angle, slow pan to the right", "eye-level, tracking the object from the side", "low angle, tilting up",
    "top-down, dolly forward", "eye-level, slow zoom in", "high angle, handheld drift",
)  # fmt: skip
ENVIRONMENTS = (
    "shallow coral reef", "open blue water", "sandy seabed", "kelp forest", "seagrass meadow", "rocky reef",
    "reef wall", "muck site", "rocky tide pool", "shipwreck", "mangrove roots",
)  # fmt: skip
LIGHTINGS = (
    "bright natural sunlight", "dim natural light", "artificial dive light", "sunbeams through the canopy",
    "murky, low light", "night-time darkness lit by a torch", "natural light from above",
)  # fmt: skip


def _pick(rng: random.Random, pool: Sequence[str], avoid: Sequence[str], k: int) -> list[str]:
    avoid_folded = {a.casefold() for a in avoid}
    choices = sorted({p for p in pool if p.casefold() not in avoid_folded})
    return rng.sample(choices, k)


def _pair_distractors(
    rng: random.Random, fmt: str, gt: tuple[str, str], pools: tuple[Sequence[str], ...]
) -> list[str]:
    # One option keeps the first part and changes the second, one the reverse, one changes both:
    # wrong options that look right on a glance.
    (a,), (b,) = _pick(rng, pools[0], [gt[0]], 1), _pick(rng, pools[1], [gt[1]], 1)
    a2, b2 = _pick(rng, pools[0], [gt[0], a], 1)[0], _pick(rng, pools[1], [gt[1], b], 1)[0]
    return [fmt.format(gt[0], b), fmt.format(a, gt[1]), fmt.format(a2, b2)]


def central_motion(row: dict, video: dict) -> str:
    """The central object's movement of a sample video, as the hand-written ``motion`` says."""
    return video.get("motion", row["movement_behavior"])


def distractors_for(row: dict, wrong_movements: Sequence[str], seed: int = SEED) -> dict[str, list[str]]:
    """Three wrong options per multiple-choice type of one video, deterministic in ``seed``."""
    rng = random.Random(f"sample-distractors:{seed}:{row['id']}")
    present = [row[n] for n in ("central_object", *SECONDARY_OBJECTS) if row[n]]
    absent = _pick(rng, OBJECTS, present + [row["central_object"]], 3)
    # Each wrong list names at least one object that is not in the video.
    if len(present) == 1:
        detect = [absent[0], f"{present[0]}, {absent[1]}", f"{absent[1]}, {absent[2]}"]
    else:
        detect = [
            ", ".join([*present[:-1], absent[0]]),
            ", ".join([*present, absent[1]]),
            ", ".join([absent[2], *present[1:]]),
        ]
    out = {
        "central_object": _pick(rng, CENTRAL_OBJECTS, [row["central_object"]], 3),
        "central_object_appearance": _pair_distractors(
            rng, "color: {}; size/shape: {}", (row["color"], row["size_shape"]), (COLORS, SIZE_SHAPES)
        ),
        "object_detect": detect,
        "camera_motion": _pair_distractors(
            rng,
            "camera position/view: {}; camera angle/movement: {}",
            (row["camera_position"], row["camera_angle"]),
            (CAMERA_POSITIONS, CAMERA_ANGLES),
        ),
        "environment": _pick(rng, ENVIRONMENTS, [row["environment"]], 3),
        "lighting": _pick(rng, LIGHTINGS, [row["lighting"]], 3),
    }
    if wrong_movements:
        out["central_object_motion"] = list(wrong_movements)
    return out


def write_sample(out: Path, seed: int = SEED) -> dict[str, int]:
    """Write the clips, ``attributes.csv`` and ``qa.jsonl`` under ``out``; return counts."""
    out.mkdir(parents=True, exist_ok=True)
    header = ["video_id", "collection", "video_file", *ATTRIBUTES, "caption"]
    with (out / "attributes.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for v in VIDEOS:
            writer.writerow(
                [v["video_id"], v["collection"], f"{v['video_id']}.mp4", *v["attrs"], v["caption"]]
            )
    rows = read_annotations(out / "attributes.csv")
    for number, row in enumerate(rows):
        write_clip(
            out / "videos" / row["video_path"],
            num_frames=FPS * (3 + number % 3),
            fps=FPS,
            width=WIDTH,
            height=HEIGHT,
            gop=FPS,
            bframes=2,
            seed=seed * 1000 + number,
            pattern="pan" if row["camera_kind"] == MOVING else "moving",
        )
    records = []
    for row, video in zip(rows, VIDEOS, strict=True):
        motion = central_motion(row, video)
        distractors = distractors_for(row, video["wrong"] if motion else (), seed)
        records.extend(assemble_records(row, distractors, seed, answers={"central_object_motion": motion}))
    check_records(records, rows, source="sample QA records")
    with (out / "qa.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(dumps_line(record, sort_keys=False) for record in records)
    return {"videos": len(rows), "questions": len(records)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=sample_root(), help="folder to write (default: the bundled sample)"
    )
    parser.add_argument("--seed", type=int, default=SEED, help="seed of clips, distractors and option order")
    args = parser.parse_args(argv)
    counts = write_sample(args.out, args.seed)
    print(f"wrote {counts['videos']} videos and {counts['questions']} questions under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
