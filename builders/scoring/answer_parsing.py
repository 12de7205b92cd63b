"""From a model's raw reply to one of the offered choices, or to nothing, with the reason why.

One parser serves every multiple-choice metric, runner and report. It reads a reply the way a
careful person does, and where that person would hesitate it refuses: an unparsed reply is
scored as wrong and reported, never guessed. Every parse says why (:data:`REASONS`), and every
result records the parser's signature (``vqabench-choice@4|aliases:...``, like sacrebleu's), so
numbers from two parser versions are never compared unknowingly. Every version stays registered
(:data:`PARSERS`, :func:`get_parser` ``"vqabench-choice@2"``): old results can be re-scored with
the version that made them and compared with the current one (``vqabench report --parser``).

Version 2 reads, in order:

1. **Cleaning.** Unicode NFKC (full-width ``Ｂ``, ``（Ｃ）``, ``：`` become ASCII), ``<think>``
   blocks, code fences, markdown emphasis and line markers are dropped; ``\\boxed{X}`` reads as a
   declaration of X.
2. **Option names.** An option's text, whole-word and case-insensitive, with any spacing around a
   ``/`` ("Doubt / Confusion"); plus the aliases its dataset vocabulary gives it (BQA:
   ``bqa.vocabulary.LABEL_PARTS`` "Confusion", "doubt or confusion"; ``LABEL_FORMS`` "confused").
   The parser holds no dataset's words. A name inside a longer option's name counts for the
   longer one only ("reef fish" in "small reef fish"); an alias two options share names neither.
3. **Letters** count only as a standalone choice marker: the whole reply ("C", "(b)", "Ｂ"), a
   bracketed letter, "option C", or a capital letter standing alone. Not inside ``N/A`` or
   ``A/B testing``, not a letter of an option's own text, and not the article: a capital "A"
   before an ordinary word ("A person clenching his fists") is English. A lower-case letter
   counts only as the whole reply or right after a declaration, before punctuation ("answer: b.").
4. **Echoes.** The option list repeated back ("(A) Fear (B) Peace ...", "A. Surprise\nB. ...",
   or every option text in one run) says nothing about the choice and is not a mention.
5. **Negation.** A mention preceded in its clause, within five words, by a negation (not, no,
   never, neither/nor, without, n't, cannot, hardly, rather than, instead of, other than, anything
   but, unlike, except, rules out, eliminates, 不是) or followed by one ("Fear is not present",
   "Anger doesn't fit", "Anger is unlikely", "Anger? No") excludes that option: "Pain, not
   Aversion", "Not Anger, it is Fear", "not Peace but Fatigue", "Fear rather than Anger". A clause
   ends at punctuation or a contrast word (but, and, yet, so, though, while, whereas, however,
   而是), so "not X but Y" keeps Y; an option joined to a negated one by and/or/nor shares its
   negation ("rules out Surprise and Embarrassment", "can't choose between Fear and Anger"), and a
   letter shares the negation of the option text it labels ("A) Fear is not it").
6. **Declarations.** "The answer is X", "Answer: X", "I'd say / I choose / I'd go with X",
   "leaning towards X", "most likely X", "so: X", "therefore X", "X is the correct / most
   suitable / more likely ...", "X fits best", an answer-first reply ("Peace. He sits
   quietly..."), corrections ("wait, actually X"), CJK and other scripts (答案是B, 选B, 答えはC,
   정답은 B, Ответ: C). The target is the first option named within five words of the cue (two
   for so/therefore), skipping negated ones ("the answer is not A, it is C" -> C). The **last**
   declaration wins over earlier hedges and mentions. A declaration that names two options ("B or
   C", "Surprise/Anger", "C (Surprise)", "Answer: B. Anger") is ambiguous; one that only negates
   ("the answer is not A") declares nothing.
7. **After the last declaration**, sentences about other options keep it ("The answer is C. Fear
   is not present in his posture.", "... it might also be Surprise."). A later sentence that ends
   on another option, is not hedged (might, may, could, maybe, also, or) and does not name the
   declared option takes it back: "Surprise. But looking closer, Anger." is ambiguous. Inflected
   forms describe and never take a declaration back ("Excitement: he jumps and looks happy").
8. **Otherwise** the one option still named after the exclusions is the choice; none is
   ``no_option`` (or ``negated_only``), two or more is ``ambiguous``.

Version 3 (``vqabench-choice@3``) reads real models' chain-of-thought replies; on 213 of them
(``tests/data/real_replies``) it agrees with a careful reader on 96% where version 2 did on 86%, with
no wrong option. It adds:

9. **Exclusion lists.** A trailing negation with a plural or modal verb negates every option of
   the coordinated list before it ("so options C and D can be excluded", "B, C or E are
   unlikely"), so the exclusion is no declaration of C; "D is wrong" still negates D alone, and
   "Not Anger, Surprise." still chooses Surprise. An option whose
   last mention rules it out is not the option left over when nothing is declared ("the location
   of point C ... Therefore, point C does not correspond").
10. **Answers after a colon and a line break.** A declaration's answer may open the next line
   ("Therefore, the best option is:\n\nD. Fighting"), and a line ending on a copula and a colon
   declares the option that opens the next line ("... shares the style of the reference is:\n(A)
   the second image"). ``<answer>C</answer>`` declares C, closed or not.
11. **Stray capitals.** A capital beside a degree sign ("10°C", "(C°7)") is a unit, not a letter.
12. **Hypothetical and contrastive mentions** are set aside like negated ones: in a clause opened
   by if/unless/in contrast to/as opposed to/compared to ("If the video were panning, ...", "In
   contrast to normal speed, ..."), or followed by would/could and a verb other than be, fit,
   match, suit, describe ("slow motion would show blurred leaves").
13. **More declarations**: "best described by option C", "the best answer based on the given
   video is A" (up to six words between the noun and "is"), "I would conclude that", and backward
   "X (C) is most similar / more accurate / most consistent" (a parenthetical label may stand
   between the option and the cue).
14. **Option texts that are letters, numbers or very short** ("30", "-84", "E", "k") are weak:
   matched case-sensitively as whole tokens, never inside a calculation ("4 + 3 = 7"), never the
   article ("A sea turtle"), never taking a declaration back, and naming the answer only where no
   other option is named. **Options that contain their letters** ("Point A", "A is closer"): a bare
   letter in the reply is the label of a point or box ("point A is on the far wall"), and counts
   as a choice only in brackets, as "option B", or right after a declaration.
15. **A list of every option** ("the four choices: Chair, Drums, Hotdog, and Lego", "A, B, C, and
   D", "left or right") is not an answer, letters included, for two options too.
16. **Paraphrase** is read only in a declaration's sentence, only where it is safe by a wide
   margin: every content word of exactly one option (of at least two words) is there by stem
   ("the fish is swimming toward the camera" for "The fish swims toward the camera") and no word
   that only other options have ("away"). Synonyms are not guessed ("drawing his sword from the
   sheath" is not "unsheathing a sword"): a dataset names them as aliases. Everything else is
   refused.

Version 4 (``vqabench-choice@4``, the default since issue 38: on no corpus worse than version 3,
no wrong option) reads the label sets and answer formats of video benchmarks. On
the earlier corpora it reads as version 3 does (96.2% of the real replies, 99.2% of the project's,
no wrong option); each failure kind issue 38 measured on version 3 is a test it passes. It adds:

17. **Label sets as data** (:mod:`builders.scoring.label_sets`): letters of either case, numbers
   counting up from 0 or from 1, each optionally written ``(1)``, ``[A]``, ``A.``, ``1)``. A set it
   cannot read (repeats, gaps, words, letters mixed with numbers) raises
   :class:`~builders.scoring.label_sets.UnreadableLabels` naming it, from
   :meth:`AnswerParser.check_labels`, which a scorer calls on every item before reading any reply
   (:func:`builders.scoring.parser_change.parser_change` does).
18. **Labels that are also words** — numbers, lower-case letters and "I" — are labels only where a
   reply puts one: in brackets ("(2)"), as "option 2", right after a declaration or at the reply's
   start before punctuation ("Answer: 2.", "b)"), or right before their own option's text ("2: sat
   down"). "I went through the clip" and "I cannot tell" are no option I; "2 people" is a count. A
   number that is both a label and an option's text ("3" shown as label 3 and as option "3") names
   neither, unless written "option 3".
19. **Echoed instructions** are set aside: a sentence that says how to answer ("give", "output",
   "respond", ...) and shows the format or the label list ("option letters", "(A, B, C, D...)",
   "format") is no mention ("If the correct option letters (A, B, C, D...) are ..., give ... [[C]]").
20. **Requested final formats declare**: ``[[C]]`` (outside an echoed instruction), like
   ``<answer>C</answer>``, "Final answer: C" and ``\boxed{C}``; and a last line that is only a label
   or an option's text ("**C**" on its own line) after other lines. So a reply that reviews every
   option and ends "[[C]]" chooses C. A last explicit answer ("answer", a tag, ``[[C]]``) against an
   earlier explicit answer of another option is **ambiguous**, unless a correction ("wait",
   "actually", "on reflection") stands between them. A superlative statement of the choice ("the
   correct / best / most fitting ... is option D", any noun phrase before the copula) declares and
   is explicit: "... is option D, a mountain peak. Final answer: C" is no answer. Earlier explicit
   answers are also a backward
   "option B is the correct answer" / "'E ...' is also the correct answer" and the reply's opening
   answer on a line of its own ("A. Four", "'A'."; not "A. The mermaid sits far behind ...", which
   reviews option A): "A. Four ... Final answer: C" is no answer. A label in quotes ("'C' is the
   best answer") is a label, like "(C)".
21. **A first-sentence claim declares**: when nothing is declared and the mentions alone do not
   decide (two options left, or none), a short first sentence that neither hedges, asks, plans nor
   negates and states one option — by its text, or by the content words only that option has
   ("moving counter-clockwise" for "spinning counter-clockwise") — is a declaration; later mentions
   of other options then count only as they do after any declaration (rule 7): "The video is
   playing at an accelerated rate. In contrast to normal speed or fast-paced footage, ..." chooses
   "accelerated".
22. **Lists of names are no answer**: option texts in a sentence without a declaration that lists
   short items, not all of them options ("Bottle, towel, cup, phone."), are set aside.
23. **Option texts two options share** ("None of the above" shown as C and again as E, as real
   items do) name neither option; their labels still do. Versions 2 and 3 raise ``ValueError`` on
   such an item.

On 314 replies of five video models to five benchmarks, labelled by hand before any of this
version's rules changed (``tests/data/video_replies/``), version 4 agrees with a careful reader on
216 of the 220 dev replies and 91 of the 94 held-out ones, never with a wrong option.

Every step is one regular-expression scan or one pass over the mentions, so parsing is linear in
the reply's length. A reply still longer than 16 KB once cleaned is a model looping: it is read on
its first and last 8 KB, cut at sentence ends (``benchmarks/answer_parsing.py``: 1 MB in ~0.1 s).
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import ClassVar

from builders.scoring.label_sets import default_labels, label_set, letters_only

UNPARSED = "unparsed"

# Why a reply was read as it was: one of these per parse.
LETTER = "letter"  # the only option named, by its letter ("C", "(B)", "option D")
OPTION_TEXT = "option_text"  # the only option named, by its text or an alias ("Anger", "Confusion")
DECLARED = "declared"  # the last declaration names it ("The answer is C", "I'd say Anger")
NEGATION_RESOLVED = "negation_resolved"  # the only option left once negated ones are set aside
AMBIGUOUS = "ambiguous"  # two or more options remain, or a declaration names two
NO_OPTION = "no_option"  # names no option (refusals, N/A, other labels)
NEGATED_ONLY = "negated_only"  # only says what the answer is not ("Not B.")
EMPTY = "empty"  # no reply, or only whitespace and markup
REASONS: tuple[str, ...] = (
    LETTER, OPTION_TEXT, DECLARED, NEGATION_RESOLVED, AMBIGUOUS, NO_OPTION, NEGATED_ONLY, EMPTY,
)  # fmt: skip


@dataclass(frozen=True)
class Aliases:
    """Other names of option texts, owned by a dataset vocabulary; ``name`` enters the signature.

    ``names`` (parts, spellings) stand for the option like its text. ``forms`` (inflected forms:
    "surprised") do too, except that a form after a declaration never contradicts it: it describes
    ("Excitement: he jumps and looks happy").
    """

    name: str
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    forms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ParsedChoice:
    """The option index a reply chooses (None: unparsed) and the reason (one of :data:`REASONS`)."""

    index: int | None
    reason: str

    def answer(self, options: Sequence[str]) -> str:
        """The chosen option's text, or :data:`UNPARSED`."""
        return UNPARSED if self.index is None else options[self.index]


def reason_counts(parses: Iterable[ParsedChoice]) -> dict[str, int]:
    """How many parses had each reason, every reason listed (zeros included), in :data:`REASONS` order."""
    counts = Counter(p.reason for p in parses)
    return {reason: counts.get(reason, 0) for reason in REASONS}


# --- cleaning ---------------------------------------------------------------------------------------
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_END = "</think>"
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?([^{}]*)\}?\s*\}")
_TAG = re.compile(r"</?[A-Za-z][\w-]*\s*>")
_FENCE = re.compile(r"```[\w+-]*")
_EMPHASIS = re.compile(r"\*+|`+|~~|(?<!\w)_+|_+(?!\w)")
_LINE_MARKUP = re.compile(r"^[ \t]*(?:#+|>+|[-+•][ \t])[ \t]*", re.MULTILINE)


def clean_reply(text: str) -> str:
    """NFKC; drop reasoning blocks, markdown and fences; rewrite ``\\boxed{X}`` as a declaration."""
    text = unicodedata.normalize("NFKC", text)
    end = text.lower().rfind(_THINK_END)
    if end >= 0:  # only up to the last closing tag: unclosed blocks cannot make the scan quadratic
        end += len(_THINK_END)
        text = _THINK.sub(" ", text[:end]) + text[end:]
    text = _BOXED.sub(lambda m: f" Answer: {m.group(1)} \n", text)
    text = _TAG.sub(" ", text)
    text = _FENCE.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return _LINE_MARKUP.sub("", text)


# A reply longer than both parts after cleaning is a model looping: read on its first and last part.
_HEAD_CHARS = _TAIL_CHARS = 8_192
_CUTS = (re.compile(r"[.!\n。！]"), re.compile(r"[,;:，；]"), re.compile(r"\s"))


def _bounded(text: str) -> str:
    """The first and last 8 KB of a longer (degenerate) reply, as two paragraphs of whole sentences.

    Real answers are far shorter once ``<think>`` blocks are gone; in a looping reply the middle is
    repetition and the answer is at its start or end (answer-first, last declaration). Each part is
    cut at a sentence end, else at a clause break, else at whitespace, so that no negation is
    separated from what it negates.
    """
    if len(text) <= _HEAD_CHARS + _TAIL_CHARS:
        return text
    head, tail = text[:_HEAD_CHARS], text[-_TAIL_CHARS:]
    for breaks in _CUTS:
        cuts = [m.end() for m in breaks.finditer(head)]
        if cuts:
            head = head[: cuts[-1]]
            break
    for breaks in _CUTS:
        cut = breaks.search(tail)
        if cut:
            tail = tail[cut.end() :]
            break
    return f"{head}\n\n{tail}"


# --- the rules' vocabulary --------------------------------------------------------------------------
_WORD_CHARS = "A-Za-z0-9"  # ASCII only: CJK characters next to a letter do not make it a word ("答案是B")
_LEAD = re.compile(r"[\s\"'“”‘’(\[:]*(?:(?:the\s+)?(?:option|choice|letter)\s+)?", re.IGNORECASE)
_BARE_STRIP = " \t\r\n\"'“”‘’.()[]:!。"
# Forward cues: the option they declare follows (within _GAP_WORDS words; "short" cues: 2 words).
_DECLARATION_LONG = (
    r"\banswer[\"']?\s*[:=]"
    r"|\banswer\s+(?:is(?:n['’]t)?|would\s+be|will\s+be|should\s+be|must\s+be|seems\s+to\s+be"
    r"|appears\s+to\s+be|here\s+is)\b"
    r"|\b(?:correct|right|best|final|most\s+likely|most\s+suitable|most\s+fitting|most\s+appropriate)\s+"
    r"(?:option|choice|letter|emotion|label|answer)\s+(?:is|would\s+be)\b"
    r"|\b(?:option|choice|letter|emotion|label|prediction)\s*[:=]"
    r"|\b(?:emotion|feeling)\s+(?:is|would\s+be|here\s+is)\b"
    r"|\bI\s*(?:would\s+|will\s+|['’]d\s+|['’]ll\s+)?(?:choose|pick|select|go\s+with|say|opt\s+for)\b"
    r"|\bI\s+(?:think|believe|guess)\b"
    r"|\blean(?:ing|s)?\s+towards?\b|\bmost\s+(?:likely|probably)\b"
    r"|\b(?:actually|wait|on\s+second\s+thought|on\s+reflection|correction)\b"
    r"|答案|答え|正解|选择|选|정답|\b(?:ответ|antwort|respuesta|réponse|risposta|resposta)\b\s*[:=]?"
)
_DECLARATION_SHORT = r"\b(?:so|therefore|thus|hence)\b"
_DECLARATION = re.compile(rf"(?P<long>{_DECLARATION_LONG})|(?P<short>{_DECLARATION_SHORT})", re.IGNORECASE)
_GAP_WORDS, _SHORT_GAP_WORDS, _GAP_CHARS = 5, 2, 60
_MAX_SKIPPED = 4  # negated options a declaration may pass over ("not A, not B, it is C"): keeps it linear
_GAP_WORD = re.compile(rf"[{_WORD_CHARS}'’]+")
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)|[\n。！？；]")
# Backward cues: "X is correct", "X is the most suitable emotion", "X fits best".
_BACKWARD_VERB = r"(?:is|would\s+be|seems|appears)\s+(?:to\s+be\s+)?(?:the\s+)?"
_BACKWARD_FITS = (
    r"|\s+(?:fits|matches|describes\s+it)\s+(?:best|better)\b|\s+best\s+(?:fits|matches|describes)\b"
)
_BACKWARD = re.compile(
    rf"\s*[)\]]?\s*{_BACKWARD_VERB}(?:correct|right|best|answer|likeliest"
    r"|(?:more|most)\s+(?:suitable|likely|fitting|appropriate|plausible|probable))\b" + _BACKWARD_FITS,
    re.IGNORECASE,
)
# A reply that opens with an option and then stops ("Peace. He sits quietly", "B) ...") declares it.
_ANSWER_FIRST_END = re.compile(r"\s*(?:[.:!\n]|—|–|\s-\s|$)")
# After a declared target, another option in the same breath makes it a double answer.
_FOLLOW = re.compile(
    r"\s*(?:,\s*)?(?:\bor\b|\band\b|\bnor\b|\bvs\b\.?|\bversus\b|&|/|,|\()\s*"
    r"(?:(?:maybe|perhaps|possibly|probably|also|even)\s+)?(?:(?:the\s+)?(?:option|choice)\s+)?",
    re.IGNORECASE,
)
# After a declared letter: an option text as its label ("B. Anger", "B) Anger\n").
_LABEL_AFTER_LETTER = re.compile(r"\s*[.):\-–—]?\s*")
_LABEL_END = re.compile(r"\s*(?:[.!;)\n]|$)")
# Negations before a mention (in its clause, within 5 words) and after it.
_NEGATION_WORDS = (
    r"not|no|never|neither|nor|without|cannot|unlike|except|excluding|none\s+of"
    r"|lack(?:s|ing)?(?:\s+of)?|absence\s+of|rather\s+than|instead\s+of|other\s+than|anything\s+but"
    r"|rul(?:e|es|ed|ing)\s+out|exclud(?:e|es|ed|ing)|eliminat(?:e|es|ed|ing)|hardly|barely|scarcely"
    r"|far\s+from"
)
_NEGATION_CUE = re.compile(rf"\b(?:{_NEGATION_WORDS})\b|n['’]t\b|不是|并非|而非", re.IGNORECASE)
# Between a negation and the mention it negates: at most 4 words, and no clause boundary.
_NEGATION_REACH = re.compile(rf"(?:[^{_WORD_CHARS}]+[{_WORD_CHARS}'’]+){{0,4}}[^{_WORD_CHARS}]*")
_JOINED = re.compile(r"\s*,?\s*(?:and|or|nor|&|/)\s*(?:(?:the\s+)?(?:option|choice)\s+)?", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(
    r"[.,;:!?()\n。，；！？]|\b(?<!anything\s)(?<!nothing\s)but\b|\b(?:and|yet|so|though|although|while"
    r"|whereas|however)\b|而是|但是",
    re.IGNORECASE,
)
# Before a later option: words that offer it as a possibility, not as the answer.
_HEDGE = re.compile(r"\b(?:might|may|could|possibly|perhaps|maybe|also|or|partly|some)\b", re.IGNORECASE)
_SENTENCE_FINAL = re.compile(r"\s*(?:[.!?\n。！？]|$)")
_NEGATION_AFTER_BODY = (
    r"\s*(?:\?\s*(?:(?:definitely|certainly|probably|surely)\s+)?(?:no|nope|unlikely|not)\b|\s*[-–—:]\s*(?:no|nope)\b"
    r"|(?:is|are|was|seems|looks|appears|does|do|did|would|could|can|should|must)\s+"
    r"(?:(?:definitely|clearly|certainly|probably|really|be)\s+)?(?:not\b|n['’]t\b)"
    r"|(?:is|are|was|does|do|did|would|could|ca|should)n['’]t\b"
    r"|(?:(?:is|seems|looks|appears|would\s+be|is\s+probably|is\s+definitely|is\s+clearly)\s+)?"
    r"(?:unlikely|wrong|incorrect|ruled\s+out|excluded|eliminated|absent|implausible|out\s+of\s+place"
    r"|out\s+of\s+the\s+question)\b"
    r"|can\s+be\s+(?:ruled\s+out|excluded|eliminated))"
)
_NEGATION_AFTER = re.compile(_NEGATION_AFTER_BODY, re.IGNORECASE)
# Echoed lists: the gap inside "(A) Fear" and between "Fear" and "(B)"; between listed texts.
_PAIR_GAP = re.compile(r"[\s.:)\-–—]{0,4}")
_LIST_GAP = re.compile(r"[\s,;.|/]{1,6}")
_TEXT_LIST_GAP = re.compile(r"\s*(?:[,;/|]|\band\b|\bor\b)?\s*(?:\band\b|\bor\b)?\s*", re.IGNORECASE)

# Words after a capital "A" that make it the option letter rather than the article.
_LETTER_A_FOLLOWERS = frozenset(
    "or and nor but vs versus because since is was seems looks appears fits matches would could might may "
    "can then best".split()
)
_CLOSES = re.compile(r"\s*(?:[.)\]:,;!?。]|$)")
_FOLLOWER = re.compile(r"\s+([A-Za-z]+)")
_KEY_SPACE = re.compile(r"\s+")
_KEY_SLASH = re.compile(r"\s*/\s*")

# --- what version 3 adds ----------------------------------------------------------------------------
# Declarations: the answer set off after a colon and a line break ("the best option is:\n\nD.
# Fighting"), a copula ending its line on a colon ("... the reference image is:\n(A) the second
# image"), "best described by", "the best answer based on the given video is A", "I would conclude".
_COPULA = r"(?:is|would\s+be|will\s+be|should\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be)"
_DECLARATION_V3 = re.compile(
    rf"(?P<long>{_DECLARATION_LONG}"
    r"|\b(?:correct|right|best|final|most\s+likely|most\s+suitable|most\s+fitting|most\s+appropriate)[^\S\n]+"
    rf"(?:option|choice|letter|emotion|label|answer)(?:[^\S\n]+[\w'’-]+){{1,6}}?[^\S\n]+(?:is|would\s+be)\b"
    r"|\bbest[^\S\n]+(?:described|captured|represented|explained|characteri[sz]ed|reflected|matched)[^\S\n]+by\b"
    r"|\bI[^\S\n]*(?:would[^\S\n]+|['’]d[^\S\n]+)?conclude(?:[^\S\n]+that)?\b)"
    rf"|(?P<short>{_DECLARATION_SHORT})"
    rf"|(?P<colon>\b{_COPULA}[^\S\n]*:(?=[^\S\n]*\n))",
    re.IGNORECASE,
)
# After a cue, a colon and line breaks before the answer ("is:\n\n(D) Point D"): not a sentence end.
_COLON_BREAK = re.compile(r"[^\S\n]*:?[^\S\n]*\n\s*")
# Backward cues also after a parenthetical label ("The third image (B) is most similar") and with
# the comparatives that answer "which is most similar / accurate ..." questions.
_BACKWARD_COMPARATIVES = (
    r"(?:correct|right|best|answer|likeliest"
    r"|(?:more|most)\s+(?:suitable|likely|fitting|appropriate|plausible|probable|similar|accurate|consistent))\b"
)
_BACKWARD_V3 = re.compile(
    rf"(?:[^\S\n]*\([^()\n]{{1,20}}\))?\s*[)\]]?\s*{_BACKWARD_VERB}{_BACKWARD_COMPARATIVES}" + _BACKWARD_FITS,
    re.IGNORECASE,
)
# Version 4: also after a closing quote and with "also" ("'E None of the above' is also the correct
# answer"), an answer of its own beside any other.
_BACKWARD_V4 = re.compile(
    rf"(?:[^\S\n]*\([^()\n]{{1,20}}\))?\s*[)\]'\"’”]?\s*(?:is\s+also\s+(?:the\s+)?|{_BACKWARD_VERB})"
    rf"{_BACKWARD_COMPARATIVES}" + _BACKWARD_FITS,
    re.IGNORECASE,
)
# Version 4: a superlative statement of the choice, any noun phrase before the copula, when the
# label it names is written "option D" ("the most fitting representation of his nose is option D").
_SUPERLATIVE = r"(?:correct|right|best|most\s+(?:likely|suitable|fitting|appropriate))"
_DECLARATION_V4 = re.compile(
    rf"{_DECLARATION_V3.pattern}"
    rf"|(?P<superlative>\b{_SUPERLATIVE}(?:[^\S\n]+[\w'’-]+){{1,8}}?[^\S\n]+(?:is|would\s+be)"
    r"(?=[^\S\n]+(?:the[^\S\n]+)?(?:option|choice)[^\S\n]))",
    re.IGNORECASE,
)
# Mentions set aside like negated ones: hypothetical ("If the video were panning", "slow motion
# would show ...") and contrastive ("In contrast to normal speed", "as opposed to", "compared to").
_NEGATION_CUE_V3 = re.compile(
    rf"\b(?:{_NEGATION_WORDS}|if|unless|in\s+contrast\s+(?:to|with)|as\s+opposed\s+to|compared\s+(?:to|with))\b"
    r"|n['’]t\b|不是|并非|而非",
    re.IGNORECASE,
)
_NEGATION_AFTER_V3 = re.compile(
    _NEGATION_AFTER_BODY[:-1]
    + r"|(?:are|were|seem|look|appear)\s+(?:(?:all|both|probably|definitely|clearly)\s+)?"
    r"(?:unlikely|wrong|incorrect|ruled\s+out|excluded|eliminated|absent|implausible)\b"
    r"|(?:would|could)\s+(?!(?:be|fit|fits|match|suit|work|describe|best|also|likely|still|probably"
    r"|definitely|certainly|clearly|really|not)\b)[a-z]+\b)",
    re.IGNORECASE,
)
# A trailing negation with a plural or modal verb negates the whole coordinated list before it
# ("options C and D can be excluded", "B, C or E are not correct"); "D is wrong" negates D alone.
_PLURAL_NEGATION = re.compile(
    r"\s*(?:are|were|do|did|can|could|would|should|must|may|might)\b|\s*(?:are|were|do|did|ca|could|would|should)n['’]t\b",
    re.IGNORECASE,
)
# Coordinated options before a trailing plural negation: "C and D", "C, D or E", "B, C, D". (A comma
# alone does not carry a leading negation forward: "Not Anger, Surprise." chooses Surprise.)
_JOINED_V3 = re.compile(
    r"\s*(?:,\s*(?:(?:and|or|nor)\s+)?|(?:and|or|nor|&|/)\s*)(?:(?:the\s+)?(?:options?|choices?)\s+)?",
    re.IGNORECASE,
)
# Option texts that are numbers or at most two characters ("30", "-84", "E", "k") are weak: matched
# case-sensitively as whole tokens, never taking a declaration back, and naming the answer only
# where no other option is named.
_WEAK_TEXT = re.compile(r"[-+]?\d+(?:[.,]\d+)?%?|\S{1,2}")
# Paraphrase: content words, compared by a crude stem (the inflections of English).
_CONTENT_WORD = re.compile(r"[a-z]{3,}")
_STEM_SUFFIX = re.compile(r"(?:ing|ed|es|s|ly)$")
_FUNCTION_WORDS = frozenset(
    "the and for with from into onto that this these those its his her their our your are was were been "
    "being has have had does did not but also very more most than then there here its which who whom what "
    "when where while into over under about again".split()
)
# An R1-style answer tag, closed or not: "<answer>C</answer>".
_ANSWER_TAG = re.compile(r"<answer>([^<]{0,200})", re.IGNORECASE)
_ARITHMETIC_AFTER = re.compile(r"[^\S\n]*[+*/×÷=−-][^\S\n]*\d")
_ARITHMETIC_BEFORE = re.compile(r"\d[^\S\n]*[+*/×÷=−-][^\S\n]*\Z")
_PARAPHRASE_CHARS = 200  # a declaration's paraphrase is read within this many characters of the cue


def _governed(text: str, cues: list[tuple[int, int]], pos: int, reach: re.Pattern[str] | None = None) -> bool:
    """Whether the nearest cue (a sorted span) before ``pos`` is in its clause, within ``reach``."""
    k = bisect_right(cues, (pos, pos)) - 1
    if k < 0 or cues[k][1] > pos:
        return False
    end = cues[k][1]
    return (reach is None or reach.fullmatch(text, end, pos) is not None) and not _CLAUSE_BREAK.search(
        text, end, pos
    )


def _reach(cue: re.Match[str]) -> int:
    """How many words a declaration cue may stand from its option: "so"/"therefore" 2, a copula
    ending its line on a colon none (the option opens the next line), any other 5."""
    groups = cue.groupdict()
    if groups.get("colon"):
        return 0
    return _SHORT_GAP_WORDS if groups.get("short") else _GAP_WORDS


def _key(name: str) -> str:
    """What makes two spellings of a name the same: case, spacing, a trailing period, slash spacing."""
    return _KEY_SLASH.sub("/", _KEY_SPACE.sub(" ", name).strip().rstrip(".").strip()).casefold()


def _name_pattern(name: str) -> str:
    """Whitespace between words may be any whitespace, and around a slash any or none."""
    return r"\s*/\s*".join(r"\s+".join(map(re.escape, part.split())) for part in name.split("/"))


@dataclass(slots=True)
class _Mention:
    """One place where a reply names an option; marks set by the echo and negation rules."""

    start: int
    end: int
    option: int
    letter: bool
    form: bool = False
    weak: bool = False  # a number or a text of one or two characters (version 3)
    negated: bool = False
    echo: bool = False


@dataclass(frozen=True)
class _Rules:
    """What one parser version reads. The defaults are version 2; each flag is a rule of version 3."""

    declaration: re.Pattern[str] = _DECLARATION
    backward: re.Pattern[str] = _BACKWARD
    answer_first_end: re.Pattern[str] = _ANSWER_FIRST_END  # what may follow a reply's opening answer
    negation_cue: re.Pattern[str] = _NEGATION_CUE
    negation_after: re.Pattern[str] = _NEGATION_AFTER
    joined: re.Pattern[str] = _JOINED
    coordinated: re.Pattern[str] = _JOINED  # the gaps of a list a trailing plural negation covers
    unit_marks: str = ""  # characters that make a capital beside them a unit ("10°C"), not a letter
    colon_break: bool = False  # "is:\n\n(D) Point D" declares D
    coordinated_exclusion: bool = False  # "options C and D can be excluded" excludes C too
    letter_labels: bool = False  # options that contain their letters ("Point A"): bare letters are labels
    weak_texts: bool = False  # numbers and very short option texts are weak mentions
    complete_lists: bool = False  # any list naming every option ("A, B, C, and D") is not an answer
    paraphrase: bool = False  # a declaration may name an option by the stems of all its content words
    answer_tags: bool = False  # "<answer>C</answer>" declares C, like "\\boxed{C}"
    excluded_stay_out: bool = False  # an option whose last mention rules it out is not the one left over
    # version 4
    label_sets: bool = False  # letters of either case, numbers from 0 or 1, bracketed forms
    strict_labels: bool = False  # numbers, lower-case letters and "I" are labels only where a reply puts one
    templates: bool = False  # echoed instructions ("give ... [[C]]") are set aside
    final_formats: bool = False  # "[[C]]", a lone label on the last line declare it
    answer_conflicts: bool = False  # a last explicit answer against an earlier one is ambiguous
    first_claim: bool = False  # the first sentence's claim of one option declares it
    name_lists: bool = False  # a list of names is no answer, though one name is an option's
    shared_texts: bool = False  # a text two options share ("None of the above" twice) names neither
    quoted_labels: bool = False  # a label in quotes ("'C' is the best answer") is a label, like "(C)"


_V2_RULES = _Rules()
_V3_RULES = _Rules(
    declaration=_DECLARATION_V3,
    backward=_BACKWARD_V3,
    negation_cue=_NEGATION_CUE_V3,
    negation_after=_NEGATION_AFTER_V3,
    coordinated=_JOINED_V3,
    unit_marks="°",
    colon_break=True,
    coordinated_exclusion=True,
    letter_labels=True,
    weak_texts=True,
    complete_lists=True,
    paraphrase=True,
    answer_tags=True,
    excluded_stay_out=True,
)

# --- what version 4 adds ----------------------------------------------------------------------------
# Echoed instructions: a sentence that tells how to answer ("give", "output", "respond", ...) and
# shows the format or the label list ("option letters", "(A, B, C, D...)", "format"), not in the
# first person.
_NOT_NEWLINE = re.compile(r"[^\n]")
_SENTENCE_CUT = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s+[A-Z(\[<*\"'])|\n")
_TEMPLATE_MARK = re.compile(
    r"\boption\s+(?:letters?|labels?|numbers?)\b|\(?\b[A-E](?:\s*,\s*[A-E]){2,}\s*,?\s*(?:\.\.\.|…|etc)"
    r"|\bformat(?:ted)?\b|\bplaceholder\b|\bdouble\s+(?:square\s+)?brackets\b",
    re.IGNORECASE,
)
# An instruction is addressed to the model; a sentence in the first person is the model's own answer.
_FIRST_PERSON = re.compile(r"\b(?:I|I['’](?:ll|d|m)|[Mm]y|[Mm]e)\b")
_TEMPLATE_VERB = re.compile(
    r"\b(?:give|output|respond|reply|provide|put|enclose|wrap|write|return|answer\s+with)\b",
    re.IGNORECASE,
)
# The formats benchmarks ask for: "[[C]]" anywhere it is not an echoed instruction.
_DOUBLE_BRACKET = re.compile(r"\[\[\s*([^\[\]\n]{1,60}?)\s*\]\]")
# A declaration that names the answer explicitly ("the answer is", "Answer:", tags, "[[C]]", "the
# correct / best / most fitting option is").
_EXPLICIT = re.compile(
    rf"answer|答案|答え|정답|ответ|antwort|respuesta|réponse|risposta|resposta|\b{_SUPERLATIVE}\b",
    re.IGNORECASE,
)
# A backward declaration that is an explicit answer: "B is the correct answer", "A is correct".
_EXPLICIT_BACKWARD = re.compile(r"\b(?:answer|correct)\b", re.IGNORECASE)
# Between two explicit answers, a correction keeps the later one ("... wait, actually, the answer is C").
_CORRECTION = re.compile(
    r"\b(?:actually|wait|on\s+second\s+thought|on\s+reflection|correction|re-?evaluat\w*|upon\s+further|"
    r"let\s+me\s+(?:re-?check|reconsider)|reconsider\w*)\b",
    re.IGNORECASE,
)
# A first sentence that hedges, asks, plans or reads the options is no claim.
_NO_CLAIM = re.compile(
    r"\?|\b(?:might|may|could|possibly|perhaps|maybe|seems?|appears?|likely|unlikely|if|whether|let|need"
    r"|should|would|first|initially|question|options?|choices?|answer|think|guess|unclear|hard|difficult)\b",
    re.IGNORECASE,
)
# Between a bare label and its own option's text: "2: burst", "b) cup".
_LABEL_MARK = re.compile(r"[^\S\n]*[.):\-–—][^\S\n]*")
_CLAIM_CHARS = 240  # a first sentence longer than this is description, not a claim
# Lists of names: items separated by commas ("bottle, towel, cup and phone"); inner items are short.
_LIST_ITEM_SPLIT = re.compile(r"\s*(?:[,;]\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+)", re.IGNORECASE)
_LIST_ITEM_WORDS, _LIST_LAST_WORDS = 3, 5  # the last item may run on ("a phone on the table")
# A reply's opening answer may be quoted or bold: "'A'.", "**B**\n".
_ANSWER_FIRST_END_V4 = re.compile(r"\s*[\"'“”‘’*]*\s*(?:[.:!\n]|—|–|\s-\s|$)")
_V4_RULES = replace(
    _V3_RULES,
    declaration=_DECLARATION_V4,
    backward=_BACKWARD_V4,
    answer_first_end=_ANSWER_FIRST_END_V4,
    label_sets=True,
    strict_labels=True,
    templates=True,
    final_formats=True,
    answer_conflicts=True,
    first_claim=True,
    name_lists=True,
    shared_texts=True,
    quoted_labels=True,
)


def _set_aside_templates(text: str) -> str:
    """The reply with each echoed instruction sentence blanked ("If the correct option letters (A, B,
    C, D...) are ..., give ... [[C]]"): it says how to answer, not what."""
    out, start = [], 0
    for cut in [*(m.end() for m in _SENTENCE_CUT.finditer(text)), len(text)]:
        sentence = text[start:cut]
        if (
            _TEMPLATE_MARK.search(sentence)
            and _TEMPLATE_VERB.search(sentence)
            and not _FIRST_PERSON.search(sentence)
        ):
            sentence = _NOT_NEWLINE.sub(" ", sentence)
        out.append(sentence)
        start = cut
    return "".join(out)


def _stem(word: str) -> str:
    """A crude English stem: "swimming", "swims", "swim" -> "swim"; "rotates", "rotating" -> "rotat"."""
    word = _STEM_SUFFIX.sub("", word)
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # "swimm" -> "swim"
    return word.rstrip("e") if len(word) > 3 else word


def _content_stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _CONTENT_WORD.findall(text.lower()) if w not in _FUNCTION_WORDS)


def _is_article(text: str, end: int) -> bool:
    """Whether a capital "A" ending at ``end`` is the article: an ordinary lower-case word follows."""
    follower = _FOLLOWER.match(text, end)
    return bool(follower and follower.group(1).islower() and follower.group(1) not in _LETTER_A_FOLLOWERS)


def _labels_own_letter(text: str, letters: Sequence[str]) -> bool:
    """Whether an option text contains an option letter as a word that is not the article ("Point A",
    "A is closer"; not "A sea turtle swims")."""
    if not letters:
        return False
    pattern = rf"(?<![{_WORD_CHARS}])[{''.join(letters)}](?![{_WORD_CHARS}])"
    return any(not (m.group() == "A" and _is_article(text, m.end())) for m in re.finditer(pattern, text))


class _Item:
    """The options of one item, compiled once: one regex for every name, one for letters."""

    def __init__(
        self,
        options: tuple[str, ...] | None,
        letters: tuple[str, ...] | None,
        aliases: Aliases | None,
        rules: _Rules = _V2_RULES,
    ):
        self.rules = rules
        if options is None and not letters:
            raise ValueError("give the option texts, the option letters, or both")
        n = len(options) if options is not None else len(letters)  # type: ignore[arg-type]
        self.n = n
        self.digits = False
        if letters is not None and not letters:
            self.letters: tuple[str, ...] = ()  # option texts only
        elif rules.label_sets:
            labels = label_set(letters, n)
            self.letters, self.digits = labels.labels, labels.digits
        else:
            self.letters = letters_only(default_labels(n) if letters is None else letters, n)
        self.option_of: dict[str, int] = {}
        self.forms: set[str] = set()  # keys of inflected forms
        self.names: re.Pattern[str] | None = None
        self.weak_re: re.Pattern[str] | None = None
        self.weak_of: dict[str, int] = {}
        self.letter_labels = False
        self.content: list[frozenset[str]] = []
        if options is not None:
            texts = [" ".join(str(o).split()).rstrip(".").strip() for o in options]
            if any(not o for o in texts):
                raise ValueError(f"empty option text in {list(options)}")
            keys = [_key(o) for o in texts]
            twice = {k for k, count in Counter(keys).items() if count > 1}
            if twice and not rules.shared_texts:
                raise ValueError(f"option texts must be distinct, got {list(options)}")
            self.option_of = {k: i for i, k in enumerate(keys) if k not in twice}
            shared: set[str] = set()
            spelled = {_key(o): o for o in texts}
            tables = (aliases.names, aliases.forms) if aliases else ()
            forms = aliases.forms if aliases else None
            for i, text in enumerate(texts):
                for table in tables:
                    for alias in table.get(text, ()):
                        k = _key(alias)
                        if self.option_of.get(k, i) != i:
                            shared.add(k)  # names two options: evidence for neither
                        elif k not in spelled:
                            self.option_of[k], spelled[k] = i, alias
                            if table is forms:
                                self.forms.add(k)
            for k in shared:
                if spelled[k] not in texts:
                    del self.option_of[k]
            weak = {k for k in self.option_of if rules.weak_texts and _WEAK_TEXT.fullmatch(spelled[k])}
            strong = sorted((k for k in self.option_of if k not in weak), key=len, reverse=True)
            if strong:
                body = "|".join(_name_pattern(spelled[k]) for k in strong)
                self.names = re.compile(rf"(?<![{_WORD_CHARS}])(?:{body})(?![{_WORD_CHARS}])", re.IGNORECASE)
            self.weak_of = {spelled[k]: self.option_of[k] for k in weak}
            if weak:  # case-sensitive whole tokens: "E" is not "e", "30" is not "30.5" or "300"
                body = "|".join(re.escape(w) for w in sorted(self.weak_of, key=len, reverse=True))
                self.weak_re = re.compile(rf"(?<![\w.,\-])(?:{body})(?![\w]|[.,]\d)")
            self.letter_labels = rules.letter_labels and any(
                _labels_own_letter(t, self.letters) for t in texts
            )
            self.content = [_content_stems(t) for t in texts] if rules.paraphrase else []
        self.letter_re: re.Pattern[str] | None = None
        if self.letters:
            spellings = sorted({*self.letters, *(s.lower() for s in self.letters)}, key=len, reverse=True)
            cls = "|".join(map(re.escape, spellings))
            near = f"{_WORD_CHARS}'’/&\\-{rules.unit_marks}"
            plural = "s?" if rules.complete_lists else ""
            quoted = (  # version 4: a quoted label ("'C'") names its option; before, the group never matches
                rf"|(?<![{near}])[\"'‘“](?P<quoted>{cls})[\"'’”](?![{_WORD_CHARS}])"
                if rules.quoted_labels
                else "|(?P<quoted>(?!))"
            )
            self.letter_re = re.compile(
                rf"(?<![{near}])(?P<open>[(\[]\s*)?(?P<l>{cls})(?P<close>\s*[)\]])?(?![{near}])"
                rf"|(?i:\b(?:option{plural}|choice{plural}|letter{plural})\s+)(?P<named>{cls})(?![{_WORD_CHARS}'’])"
                + quoted
            )
        # Numbers that are both a label and an option's text ("0"-"4" shown with counts "3", "4"):
        # only "option 3" names the label, and the bare number names neither (version 4).
        self.clash = frozenset(self.letters) & frozenset(self.weak_of) if self.digits else frozenset()

    # --- mentions -----------------------------------------------------------------------------------
    def text_mentions(self, text: str) -> list[_Mention]:
        found = []
        if self.names is not None:
            for m in self.names.finditer(text):
                k = _key(m.group())
                found.append(_Mention(m.start(), m.end(), self.option_of[k], False, k in self.forms))
        if self.weak_re is not None:
            for m in self.weak_re.finditer(text):
                if _ARITHMETIC_AFTER.match(text, m.end()) or _ARITHMETIC_BEFORE.search(
                    text, max(0, m.start() - 16), m.start()
                ):
                    continue  # "4 + 3 + 1 + 2 = 10": a term of a calculation, not an option
                if m.group() == "A" and _is_article(text, m.end()):
                    continue  # "A sea turtle": the article
                if m.group() in self.clash:
                    continue  # a number that is also a label: neither, unless "option 3"
                found.append(_Mention(m.start(), m.end(), self.weak_of[m.group()], False, weak=True))
            found.sort(key=lambda m: m.start)
        return found

    def _letter_mentions(self, text: str, texts: list[_Mention], cue_ends: list[int]) -> list[_Mention]:
        if self.letter_re is None:
            return []
        text_starts = [m.start for m in texts]
        found = []
        for m in self.letter_re.finditer(text):
            letter: str = m.group("l") or m.group("named") or m.group("quoted")
            start, end = m.span()
            if (
                m.group("l")
                and self.rules.strict_labels
                and not (m.group("open") or m.group("close"))
                and (not letter.isupper() or letter == "I")
            ):
                if letter in self.clash or not self._placed_label(text, m, texts, text_starts, cue_ends):
                    continue  # "2 people", "I went through the clip", "a bit": words, not labels
            elif m.group("l") and not m.group("close"):
                if letter.islower():
                    if not self._right_after_cue(text, start, cue_ends):
                        continue  # "a", "b" are words unless they answer a declaration
                    if not _CLOSES.match(text, end):
                        continue  # "the answer is a bit unclear"
                elif (
                    self.letter_labels
                    and not m.group("open")
                    and not self._right_after_cue(text, start, cue_ends)
                ):
                    continue  # options "Point A", "A is closer": "point A", "labeled B" name the labels
                elif letter == "A" and _is_article(text, end):
                    continue  # the article: "A person clenching his fists"
            k = bisect_right(text_starts, start) - 1
            if k >= 0 and texts[k].end > start:
                continue  # a capital letter inside an option's own text
            found.append(_Mention(start, end, self.letters.index(letter.upper()), True))
        return found

    def _placed_label(
        self, text: str, m: re.Match[str], texts: list[_Mention], text_starts: list[int], cue_ends: list[int]
    ) -> bool:
        """Whether a bare number, lower-case letter or "I" (a word as often as a label) is a label: right
        after a declaration or at the reply's start, before punctuation ("Answer: 2.", "b)"), or right
        before its own option's text ("2: burst")."""
        token, start, end = m.group("l"), m.start(), m.end()
        if (
            self._right_after_cue(text, start, cue_ends) or not text[:start].strip(_BARE_STRIP)
        ) and _CLOSES.match(text, end):
            return True
        gap = _LABEL_MARK.match(text, end)
        if gap is None:
            return False
        k = bisect_left(text_starts, gap.end())
        return (
            k < len(texts)
            and texts[k].start == gap.end()
            and texts[k].option == self.letters.index(token.upper())
        )

    @staticmethod
    def _right_after_cue(text: str, pos: int, cue_ends: list[int]) -> bool:
        k = bisect_right(cue_ends, pos) - 1
        lead = _LEAD.match(text, cue_ends[k]) if k >= 0 else None  # it matches everywhere (all optional)
        return lead is not None and lead.end() >= pos

    def mentions(self, text: str, cues: list[tuple[int, int, int]]) -> list[_Mention]:
        """Every option mention in reading order, with echo and negation marks."""
        rules = self.rules
        texts = self.text_mentions(text)
        found = sorted(
            texts + self._letter_mentions(text, texts, [e for _, e, _ in cues]), key=lambda m: m.start
        )
        self._mark_echoes(text, found)
        if rules.name_lists:
            self._mark_name_lists(text, found, [start for start, _, _ in cues])
        negations = [m.span() for m in rules.negation_cue.finditer(text)]
        previous: _Mention | None = None
        live: list[_Mention] = []
        for m in found:
            if not m.echo:
                m.negated = self._negated(text, m, negations) or bool(
                    previous and previous.negated and rules.joined.fullmatch(text, previous.end, m.start)
                )  # "rules out Surprise and Embarrassment", "can't choose between Fear and Anger"
                if previous and self._is_pair(text, previous, m) and previous.negated != m.negated:
                    previous.negated = m.negated = True  # "(A) Fear is not it": the letter goes with its text
                previous = m
                live.append(m)
        if rules.coordinated_exclusion:
            run: list[_Mention] = []  # options coordinated by commas, "and", "or": "options C and D"
            for following in [*live, None]:
                if (
                    following is not None
                    and run
                    and rules.coordinated.fullmatch(text, run[-1].end, following.start)
                ):
                    run.append(following)
                    continue
                last = run[-1] if run else None
                if last and len(run) > 1 and _PLURAL_NEGATION.match(text, last.end):
                    if rules.negation_after.match(text, last.end):  # "... can be excluded", "... are not"
                        for x in run:
                            x.negated = True
                run = [] if following is None else [following]
        return found

    def _mark_echoes(self, text: str, found: list[_Mention]) -> None:
        """Option lists repeated back: "(A) Fear (B) Peace", or every option's text in one run."""
        pairs = [k for k in range(len(found) - 1) if self._is_pair(text, found[k], found[k + 1])]
        run: list[int] = []  # consecutive "(A) Fear" pairs, by the position of their letter
        for k in [*pairs, None]:
            if k is not None and run and k == run[-1] + 2:
                if _LIST_GAP.fullmatch(text, found[run[-1] + 1].end, found[k].start):
                    run.append(k)
                    continue
            if len(run) >= 2:
                for j in run:
                    found[j].echo = found[j + 1].echo = True
            run = [] if k is None else [k]
        lists = self.rules.complete_lists  # version 3: letters too ("A, B, C, and D"), and two options
        if self.n < (2 if lists else 3):
            return
        texts: list[int] = []  # option texts separated only by commas, "and", "or"
        for k in [*range(len(found)), None]:
            if k is not None and texts and (lists or not found[k].letter):
                if _TEXT_LIST_GAP.fullmatch(text, found[texts[-1]].end, found[k].start):
                    texts.append(k)
                    continue
            if len({found[j].option for j in texts}) == self.n:
                for j in texts:
                    found[j].echo = True
            texts = [k] if k is not None and (lists or not found[k].letter) else []

    @staticmethod
    def _mark_name_lists(text: str, found: list[_Mention], cue_starts: list[int]) -> None:
        """Option texts inside a list of names that are not all options ("Bottle, towel, cup, phone.")
        describe what is there; such a sentence, without a declaration, answers nothing."""
        texts = [m for m in found if not m.letter]
        starts = [m.start for m in texts]
        bounds = [0, *(m.end() for m in _SENTENCE_CUT.finditer(text)), len(text)]
        for a, b in zip(bounds, bounds[1:], strict=False):
            inside = texts[bisect_left(starts, a) : bisect_left(starts, b)]
            k = bisect_left(cue_starts, a)
            if not inside or (k < len(cue_starts) and cue_starts[k] < b):
                continue
            b = a + len(text[a:b].rstrip(_BARE_STRIP + ",;"))
            at = [m.start for m in inside]

            def holds(i: int, j: int, inside: list[_Mention] = inside, at: list[int] = at) -> bool:
                k = bisect_left(at, i)  # the first mention starting in [i, j) ends there too
                return k < len(at) and inside[k].end <= j

            def splits(pos: int, inside: list[_Mention] = inside, at: list[int] = at) -> bool:
                k = bisect_right(at, pos) - 1  # a separator inside an option's own text splits nothing
                return k < 0 or inside[k].end <= pos

            seps = [x for x in _LIST_ITEM_SPLIT.finditer(text, a, b) if splits(x.start())]
            if len(seps) < 2:
                continue
            items = [(x.end(), y.start()) for x, y in zip(seps, seps[1:], strict=False)] + [
                (seps[-1].end(), b)
            ]
            if any(len(_GAP_WORD.findall(text, i, j)) > _LIST_ITEM_WORDS for i, j in items[:-1]) or (
                len(_GAP_WORD.findall(text, *items[-1])) > _LIST_LAST_WORDS
            ):
                continue
            if all(holds(i, j) for i, j in items):
                continue  # every item an option: the complete-list and ambiguity rules apply
            for m in inside:
                m.echo = True

    @staticmethod
    def _is_pair(text: str, letter: _Mention, name: _Mention) -> bool:
        return (
            letter.letter
            and not name.letter
            and letter.option == name.option
            and _PAIR_GAP.fullmatch(text, letter.end, name.start) is not None
        )

    def _negated(self, text: str, m: _Mention, negations: list[tuple[int, int]]) -> bool:
        """Negated by the nearest negation before it in its clause, or by one right after it."""
        return _governed(text, negations, m.start, _NEGATION_REACH) or bool(
            self.rules.negation_after.match(text, m.end)
        )

    # --- reading ------------------------------------------------------------------------------------
    def parse(self, reply: str | None) -> ParsedChoice:
        if reply is None:
            return ParsedChoice(None, EMPTY)
        text = str(reply)
        rules = self.rules
        if rules.answer_tags:
            text = _ANSWER_TAG.sub(lambda m: f" Answer: {m.group(1)} \n", text)
        text = _bounded(clean_reply(text))
        if rules.templates:
            text = _set_aside_templates(text)
        if rules.final_formats:
            text = self._final_line(_DOUBLE_BRACKET.sub(lambda m: f" Answer: {m.group(1)} \n", text))
        bare = text.strip(_BARE_STRIP)
        if not bare:
            return ParsedChoice(None, EMPTY)
        if bare.upper() in self.letters:
            return ParsedChoice(self.letters.index(bare.upper()), LETTER)
        cues = [(m.start(), m.end(), _reach(m)) for m in rules.declaration.finditer(text)]
        found = self.mentions(text, cues)
        live = [m for m in found if not m.echo]
        declared = self._declarations(text, cues, live)
        if declared:
            return self._last_declaration(text, cues, live, declared)
        left = self._left_over(live)
        if rules.first_claim and left.reason in (AMBIGUOUS, NO_OPTION):  # version 4: a first-sentence claim
            claim = self._first_claim(text, found)
            if claim:
                claimed = self._last_declaration(text, cues, live, [(-1, *claim)])
                return claimed if claimed.index is not None else left
        return left

    def _last_declaration(
        self,
        text: str,
        cues: list[tuple[int, int, int]],
        live: list[_Mention],
        declared: list[tuple[int, int | None, bool, int]],
    ) -> ParsedChoice:
        """The last declaration's option, unless it names two, a later sentence takes it back, or
        (version 4) an earlier explicit answer of another option conflicts with it."""
        position, index, resolved, end = max(declared, key=lambda d: d[0])
        if index is None or self._contradicted(text, live, index, end):
            return ParsedChoice(None, AMBIGUOUS)
        if self.rules.answer_conflicts and self._overruled(text, cues, live, declared, position, index):
            return ParsedChoice(None, AMBIGUOUS)
        return ParsedChoice(index, NEGATION_RESOLVED if resolved else DECLARED)

    def _left_over(self, live: list[_Mention]) -> ParsedChoice:
        """Without a declaration: the one option still named once negated ones are set aside."""
        kept = [m for m in live if not m.negated]
        if self.rules.excluded_stay_out:  # "the location of point C ... point C does not correspond"
            last = {m.option: m.negated for m in live}  # the reply's last word on each option
            kept = [m for m in kept if not last[m.option]]
        strong = [m for m in kept if not m.weak]
        options = {m.option for m in strong or kept}  # a weak mention names the answer only alone
        if len(options) > 1:
            return ParsedChoice(None, AMBIGUOUS)
        if not options:
            return ParsedChoice(None, NEGATED_ONLY if live else NO_OPTION)
        (index,) = options
        if any(m.negated for m in live):
            return ParsedChoice(index, NEGATION_RESOLVED)
        return ParsedChoice(index, LETTER if all(m.letter for m in strong or kept) else OPTION_TEXT)

    def _final_line(self, text: str) -> str:
        """A last line that is only a label or an option's text ("**C**", "(2)", "Fighting") after
        other lines is the reply's final declaration: it is rewritten as one."""
        body, _, last = text.rstrip().rpartition("\n")
        word = last.strip(_BARE_STRIP)
        if body.strip() and word and (word.upper() in self.letters or _key(word) in self.option_of):
            return f"{body}\nAnswer: {word}"
        return text

    def _overruled(
        self,
        text: str,
        cues: list[tuple[int, int, int]],
        live: list[_Mention],
        declared: list[tuple[int, int | None, bool, int]],
        position: int,
        index: int,
    ) -> bool:
        """Whether the last declaration, an explicit answer ("Answer: C", "[[C]]"), conflicts with an
        earlier explicit answer of another option, no correction ("wait, actually") between them.
        Explicit earlier: a cue that says "answer" or "correct", a backward "B is the correct answer"
        / "A is correct", and the reply's opening answer ("A. Four\n...") unless it opens a list."""
        explicit = {start for start, end, _ in cues if _EXPLICIT.search(text, start, end)}
        if position not in explicit:
            return False
        cue_starts = {start for start, _, _ in cues}
        corrections = [m.start() for m in _CORRECTION.finditer(text, 0, position)]

        def earlier_explicit(p: int, end: int) -> bool:
            if p in explicit:
                return True
            if p < 0:  # the opening answer is explicit on a line of its own ("A. Four", "'A'."),
                line_end = text.find("\n", end)  # not when the line goes on ("A. The mermaid is ...")
                return not text[end : len(text) if line_end < 0 else line_end].strip(_BARE_STRIP + "*")
            if p in cue_starts:
                return False
            back = self.rules.backward.match(text, end)
            return back is not None and _EXPLICIT_BACKWARD.search(back.group()) is not None

        return any(
            p < position
            and i is not None
            and i != index
            and earlier_explicit(p, end)
            and bisect_right(corrections, p) == len(corrections)
            for p, i, _, end in declared
        )

    def _first_claim(self, text: str, found: list[_Mention]) -> tuple[int, bool, int] | None:
        """The option the first sentence states as the reply's claim ("The video is playing at an
        accelerated rate."; "The circular pattern is moving counter-clockwise." for "spinning
        counter-clockwise"): one option, named or told apart by the words only it has, in a short
        sentence that neither hedges, asks, plans nor negates."""
        start = len(text) - len(text.lstrip())
        stop = _SENTENCE_END.search(text, start)
        end = stop.start() if stop else len(text)
        sentence = text[start:end]
        if (
            end - start > _CLAIM_CHARS
            or _NO_CLAIM.search(sentence)
            or self.rules.negation_cue.search(sentence)
        ):
            return None
        first = [m for m in found if start <= m.start < end]
        named = {m.option for m in first}
        if len(named) > 1 or any(m.letter or m.negated or m.echo for m in first):
            return None
        index = named.pop() if named else self._told_apart(sentence)
        return None if index is None else (index, False, end)

    def _told_apart(self, sentence: str) -> int | None:
        """The one option whose own content words (those no other option has) are all in ``sentence``,
        no other option's own words being there ("moving counter-clockwise": "counter")."""
        if not self.content:
            return None
        said = _content_stems(sentence)
        own = [
            c - frozenset().union(*(d for j, d in enumerate(self.content) if j != i))
            for i, c in enumerate(self.content)
        ]
        hits = [i for i, o in enumerate(own) if o and o <= said]
        if len(hits) != 1 or any(o & said for i, o in enumerate(own) if i != hits[0]):
            return None
        return hits[0]

    @staticmethod
    def _contradicted(text: str, live: list[_Mention], index: int, end: int) -> bool:
        """A later sentence that ends on another option, unhedged and without naming the declared
        one, takes the declaration back ("Surprise. But looking closer, Anger."); sentences that talk
        about other options do not ("The answer is C. Fear is not present", "it might also be X")."""
        hedges = [m.span() for m in _HEDGE.finditer(text, end)]
        names_declared, previous_end = True, end  # the declaration's own sentence names it
        for m in live[bisect_left([x.start for x in live], end) :]:
            if _SENTENCE_END.search(text, previous_end, m.start):
                names_declared = False  # a new sentence
            previous_end = m.end
            if m.option == index:
                names_declared = True
                continue
            if names_declared or m.negated or m.form or m.weak or not _SENTENCE_FINAL.match(text, m.end):
                continue
            if not _governed(text, hedges, m.start):
                return True
        return False

    def _declarations(
        self, text: str, cues: list[tuple[int, int, int]], live: list[_Mention]
    ) -> list[tuple[int, int | None, bool, int]]:
        """(position, option or None for a double answer, whether negations were set aside, end of
        the target) per declaration."""
        starts = [m.start for m in live]
        declared: list[tuple[int, int | None, bool, int]] = []
        for position, end, reach in cues:
            target = self._target(text, end, starts, live, reach)
            if target is None and reach != _SHORT_GAP_WORDS and self.content:
                target = self._paraphrase(text, end)
            if target is not None:
                declared.append((position, *target))
        for k, m in enumerate(live):
            if not m.negated and self.rules.backward.match(text, m.end):
                declared.append((m.start, self._follow(text, live, k), False, m.end))
        if live and not live[0].negated and not text[: live[0].start].strip(_BARE_STRIP):
            first_end = self._option_run_end(text, live, 0)
            more = text[first_end:].strip(_BARE_STRIP)  # a bare "Anger" is an option_text, not a declaration
            if more and self.rules.answer_first_end.match(text, first_end):
                declared.append((-1, self._follow(text, live, 0), False, first_end))
        return declared

    def _target(
        self, text: str, pos: int, starts: list[int], live: list[_Mention], max_words: int
    ) -> tuple[int | None, bool, int] | None:
        """What a declaration ending at ``pos`` names: the first option within its gap, skipping negated ones."""
        if self.rules.colon_break:  # "the best option is:\n\nD. Fighting"
            brk = _COLON_BREAK.match(text, pos)
            if brk and (":" in brk.group() or text[pos - 1 : pos] == ":"):
                pos = brk.end()
        k = first = bisect_left(starts, pos)
        skipped = False
        while k < len(live):
            m = live[k]
            gap = text[pos : m.start]
            if len(gap) > _GAP_CHARS or _SENTENCE_END.search(gap) or len(_GAP_WORD.findall(gap)) > max_words:
                break
            if not m.negated:
                if max_words == 0 and self._opens_a_list(text, live, k):
                    return None  # "each option is:\nA. ...\nB. ...": a list, not an answer
                return self._follow(text, live, k), skipped, self._option_run_end(text, live, k)
            skipped, pos, max_words = True, m.end, _GAP_WORDS
            k += 1
            if k - first > _MAX_SKIPPED:
                break
        return None

    @staticmethod
    def _opens_a_list(text: str, live: list[_Mention], k: int) -> bool:
        """Whether the line after mention ``k``'s line opens with another option ("A. ...\nB. ...")."""
        line_end = text.find("\n", live[k].end)
        if line_end < 0:
            return False
        following = len(text) - len(text[line_end:].lstrip())
        for j in range(k + 1, len(live)):
            m = live[j]
            if m.start >= following:
                return m.start == following and m.option != live[k].option
        return False

    def _paraphrase(self, text: str, pos: int) -> tuple[int, bool, int] | None:
        """The option a declaration names in other inflections ("the fish is swimming toward the
        camera" for "The fish swims toward the camera"): the declaration's sentence holds, by stem,
        every content word of exactly one option (of at least two), and no content word that only
        other options have ("away" for "The fish swims away from the camera")."""
        end = min(len(text), pos + _PARAPHRASE_CHARS)
        stop = _SENTENCE_END.search(text, pos, end)
        end = stop.start() if stop else end
        if self.rules.negation_cue.search(text, pos, end) or self.text_mentions(text[pos:end]):
            return None  # "the answer is not that ...", or an option named as such: no paraphrase
        said = _content_stems(text[pos:end])
        full = [i for i, c in enumerate(self.content) if len(c) >= 2 and c <= said]
        if len(full) != 1:
            return None
        (index,) = full
        own = self.content[index]
        if any((c - own) & said for i, c in enumerate(self.content) if i != index):
            return None
        return index, False, end

    def _option_run_end(self, text: str, live: list[_Mention], k: int) -> int:
        """End of mention ``k`` and of the mentions of the same option glued to it ("C (Anger)", "B. Anger")."""
        end = live[k].end
        for j in range(k + 1, len(live)):  # no slice: a copy per call would make long replies quadratic
            m = live[j]
            if m.option != live[k].option or not re.fullmatch(r"[\s.():\-–—]*", text[end : m.start]):
                break
            end = m.end
        return end

    def _follow(self, text: str, live: list[_Mention], k: int) -> int | None:
        """The option of mention ``k``, or None when another option follows it in the same breath."""
        m = live[k]
        for nxt in live[k + 1 : k + 3]:
            if nxt.option == m.option or nxt.negated:
                continue
            follow = _FOLLOW.match(text, m.end)
            if follow and follow.end() == nxt.start:
                return None  # "B or C", "Surprise/Anger", "C (Surprise)"
            if m.letter and not nxt.letter and _LABEL_AFTER_LETTER.fullmatch(text, m.end, nxt.start):
                if _LABEL_END.match(text, nxt.end):
                    return None  # "Answer: B. Anger": the letter and its label disagree
            break
        return m.option


# --- parsers ----------------------------------------------------------------------------------------
class AnswerParser(ABC):
    """A way of reading replies into choices; ``name@version`` plus its aliases is its signature."""

    name: ClassVar[str]
    version: ClassVar[int]

    def __init__(self, aliases: Aliases | None = None):
        self.aliases = aliases

    @property
    def signature(self) -> str:
        """``name@version|aliases:<table>``: goes into every result, as sacrebleu's signature does."""
        return f"{self.name}@{self.version}|aliases:{self.aliases.name if self.aliases else 'none'}"

    @abstractmethod
    def parse(
        self, reply: str | None, options: Sequence[str] | None = None, letters: Sequence[str] | None = None
    ) -> ParsedChoice:
        """Which of ``options`` (texts in order; None: letters only) the reply chooses, and why."""

    @abstractmethod
    def check_labels(self, options: Sequence[str] | None, letters: Sequence[str] | None) -> None:
        """Raise :class:`~builders.scoring.label_sets.UnreadableLabels` naming the label set if this
        version cannot read it: called at a scorer's entry, so that a run is refused before any
        reply is read, not in the middle."""

    @abstractmethod
    def mentioned(self, text: str | None, options: Sequence[str]) -> set[int]:
        """Indices of the options ``text`` names by text or alias (letters and negations not considered)."""


#: Every registered parser, by name and version: old versions stay, so old results can be re-scored.
PARSERS: dict[str, dict[int, type[AnswerParser]]] = {}


def register_parser(cls: type[AnswerParser]) -> type[AnswerParser]:
    PARSERS.setdefault(cls.name, {})[cls.version] = cls
    return cls


def parser_names() -> list[str]:
    """``name@version`` of every registered parser, oldest first."""
    return [f"{name}@{v}" for name, versions in sorted(PARSERS.items()) for v in sorted(versions)]


@register_parser
class ChoiceParser(AnswerParser):
    """Version 2: the rules of this module's docstring up to "Version 3"."""

    name = "vqabench-choice"
    version = 2
    rules: ClassVar[_Rules] = _V2_RULES

    def __init__(self, aliases: Aliases | None = None):
        super().__init__(aliases)
        rules = self.rules
        self._item = lru_cache(maxsize=4096)(lambda options, letters: _Item(options, letters, aliases, rules))

    def item(self, options: Sequence[str] | None, letters: Sequence[str] | None) -> _Item:
        return self._item(
            None if options is None else tuple(options), None if letters is None else tuple(letters)
        )

    def parse(
        self, reply: str | None, options: Sequence[str] | None = None, letters: Sequence[str] | None = None
    ) -> ParsedChoice:
        return self.item(options, letters).parse(reply)

    def check_labels(self, options: Sequence[str] | None, letters: Sequence[str] | None) -> None:
        n = len(options) if options is not None else len(letters or ())
        if letters is not None and not letters:
            return  # option texts only
        if self.rules.label_sets:
            label_set(letters, n)
        else:
            letters_only(default_labels(n) if letters is None else letters, n)

    def mentioned(self, text: str | None, options: Sequence[str]) -> set[int]:
        if not text:
            return set()
        return {m.option for m in self.item(options, ()).text_mentions(clean_reply(text))}


@register_parser
class ChoiceParserV3(ChoiceParser):
    """Version 3: version 2 plus the rules of this module's docstring under "Version 3"."""

    version = 3
    rules: ClassVar[_Rules] = _V3_RULES


@register_parser
class ChoiceParserV4(ChoiceParser):
    """Version 4: version 3 plus the rules of this module's docstring under "Version 4"."""

    version = 4
    rules: ClassVar[_Rules] = _V4_RULES


DEFAULT_PARSER = f"{ChoiceParserV4.name}@{ChoiceParserV4.version}"


def get_parser(name: str = DEFAULT_PARSER, aliases: Aliases | None = None) -> AnswerParser:
    """A registered parser by ``name@version`` (a whole signature is accepted: its aliases part is
    ignored, give ``aliases``); a bare name is its newest version."""
    base, _, version = name.partition("|")[0].strip().partition("@")
    versions = PARSERS.get(base)
    if not versions:
        raise ValueError(f"unknown answer parser {base!r}; known: {', '.join(parser_names())}")
    if not version:
        return versions[max(versions)](aliases)
    if not version.isdigit() or int(version) not in versions:
        known = ", ".join(f"{base}@{v}" for v in sorted(versions))
        raise ValueError(f"answer parser {base!r} has no version {version!r}; known: {known}")
    return versions[int(version)](aliases)


_PLAIN = get_parser()


def parsed_choice(
    reply: str | None,
    options: Sequence[str] | None = None,
    letters: Sequence[str] | None = None,
    parser: AnswerParser = _PLAIN,
) -> ParsedChoice:
    """The :class:`ParsedChoice` of a model reply: its choice and the reason (the arguments are
    :func:`parse_choice`'s). Not :func:`builders.llm.schema.validate_reply`, which checks a JSON reply."""
    return parser.parse(reply, options, letters)


def parse_choice(
    reply: str | None,
    options: Sequence[str] | None = None,
    letters: Sequence[str] | None = None,
    parser: AnswerParser = _PLAIN,
) -> int | None:
    """Index of the option a reply chooses, or None when it names none or is ambiguous.

    ``options`` are the option texts in order; ``letters`` the labels shown with them (default
    "A", "B", ... one per option; ``()`` for texts only). With ``options=None`` only letters count.
    ``parser``: e.g. one with a dataset's aliases (``bqa.accuracy.BQA_PARSER``).
    """
    return parser.parse(reply, options, letters).index


def parse_answer(
    reply: str | None,
    choices: Sequence[str],
    letters: Sequence[str] | None = None,
    parser: AnswerParser = _PLAIN,
) -> str:
    """The chosen option's text, or :data:`UNPARSED`."""
    return parser.parse(reply, choices, letters).answer(choices)


def mentioned_options(text: str | None, options: Sequence[str], parser: AnswerParser = _PLAIN) -> set[int]:
    """Indices of the option texts that ``text`` names as whole words (letters are not counted)."""
    return parser.mentioned(text, options)
