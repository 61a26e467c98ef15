"""LLM judges without a network: parsers, unparseable accounting, pairwise swap debiasing, the template
sandbox, the built-in MT-bench templates against the official wording, and config errors."""
from __future__ import annotations

import asyncio
import json

import pytest

from conftest import realdata
from eval752.checkers.judge import JudgeChecker
from eval752.checkers.pairwise import PairwiseJudgeChecker
from eval752.config import JudgeConfig, ProviderConfig, RunConfig
from eval752.errors import ConfigError
from eval752.judge.steps import parse_binary, parse_pairwise, parse_rating
from eval752.judge.templates import JudgeTemplateError, load_prompts_file, load_template
from eval752.metrics import summarise
from eval752.types import Item, Response, verdict_to_json

FAKE = ProviderConfig(name="fake", model="openai/fake", api_base="http://127.0.0.1:9")


class ScriptedJudge:
    """Stands in for JudgeClient: answers each prompt with ``reply(user_prompt)``."""

    def __init__(self, reply):
        self.reply = reply
        self.prompts: list[list[dict]] = []

    async def complete(self, messages, *, tag="judge"):
        self.prompts.append(messages)
        return Response(text=self.reply(messages[-1]["content"]))


def bound(cls, reply, **judge):
    checker = cls()
    checker.bind_run_config(RunConfig(judge=JudgeConfig(provider=FAKE, **judge)))
    checker.client = ScriptedJudge(reply)
    return checker


def row(item, verdict):
    return {"item_id": item.id, "sample": 0, "type": item.type, "status": "ok", "response": {},
            "verdict": verdict_to_json(verdict)}


# -- parsers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("Explanation... Rating: [[7]]", 7.0), ("[[ 8.5 ]]", 8.5), ("[[10]]", 10.0), ("[[1]]", 1.0),
    ("Rating: [[4]]. Again: [[4]]", 4.0),
])
def test_parse_rating_reads_mtbench_ratings(text, value):
    assert parse_rating(text).value == value


@pytest.mark.parametrize("text,why", [
    ("[[11]]", "rating 11 outside 1..10"), ("rating: 7", "no [[N]] rating"), ("", "no [[N]] rating"),
    ("[[3]] or maybe [[8]]", "several ratings: 3, 8"), ("[[0]]", "rating 0 outside 1..10"),
    ("[[rating]]", "no [[N]] rating"),
])
def test_parse_rating_odd_outputs_are_unparseable(text, why):
    parsed = parse_rating(text)
    assert parsed.value is None and parsed.why == why


@pytest.mark.parametrize("text,value", [("verdict: [[A]]", "A"), ("[[B]]", "B"), ("a tie [[C]]", "C"),
                                        ("[[A]] ... so [[A]]", "A")])
def test_parse_pairwise_reads_verdicts(text, value):
    assert parse_pairwise(text).value == value


@pytest.mark.parametrize("text", ["[[A]] [[B]]", "", "[[a]]", "A is better", "[[A]] or [[C]]"])
def test_parse_pairwise_odd_outputs_are_unparseable(text):
    assert parse_pairwise(text).value is None


@pytest.mark.parametrize("text,value", [("[[YES]]", True), ("so: [[no]]", False), ("[[1]]", True), ("0", False),
                                        ("Yes.", True), ("[[PASS]]", True)])
def test_parse_binary(text, value):
    assert parse_binary(text).value is value


@pytest.mark.parametrize("text", ["[[YES]] [[NO]]", "", "maybe", "yes, mostly", "[[2]]"])
def test_parse_binary_unparseable(text):
    assert parse_binary(text).value is None


# -- the judge checker: scores and unparseable accounting -------------------------------------------------
def test_scale_judge_counts_unparseable_exactly_and_excludes_them_from_the_mean():
    outputs = ["Rating: [[7]]", "[[11]]", "rating: 7", "", "[[3]] [[8]]", "Rating: [[10]]"]
    items = [Item(f"q{i}", "freeform", f"question {i}", answer="ref") for i in range(len(outputs))]
    by_prompt = {}
    checker = bound(JudgeChecker, lambda prompt: by_prompt[next(k for k in by_prompt if k in prompt)])
    for item, out in zip(items, outputs):
        by_prompt[f"question {item.id[1:]}\n"] = out
    verdicts = [asyncio.run(checker.acheck(it, Response(text=f"answer {it.id}"))) for it in items]
    assert [v.score for v in verdicts] == [0.7, 0, 0, 0, 0, 1.0]
    bad = [v for v in verdicts if v.details.get("unparseable")]
    assert len(bad) == 4 and all(not v.answered for v in bad)
    assert [v.details["judge"]["output"] for v in bad] == outputs[1:5]  # the raw judge output is kept
    assert "rating 11 outside 1..10" in verdicts[1].reason
    m = summarise([row(it, v) for it, v in zip(items, verdicts)])["metrics"]
    assert m["judge_score"]["value"] == pytest.approx(0.85) and m["judge_score"]["num"] == 2
    assert m["judge_score"]["unparseable"] == 4 and m["judge_score"]["judge_calls"] == 6
    assert m["judge_unparseable"]["count"] == 4 and m["judge_unparseable"]["num"] == 6
    assert m["score"]["value"] == pytest.approx(1.7 / 6, abs=1e-6)  # unparseable rows still count as 0 in `score`


def test_binary_mode_and_strip_think_preprocessing():
    checker = bound(JudgeChecker, lambda p: "[[YES]]" if "Paris" in p else "[[NO]]", mode="binary")
    item = Item("q", "freeform", "Capital of France?", answer="Paris")
    v = asyncio.run(checker.acheck(item, Response(text="<think>it might be Lyon</think>Paris")))
    assert v.score == 1.0 and v.passed and v.extracted is True
    prompt = checker.client.prompts[0][-1]["content"]
    assert "Lyon" not in prompt and "[Reference Answer]\nParis" in prompt and "[[YES]]" in prompt
    assert checker.spec.template.name == "binary"


def test_template_sees_question_reference_response_reasoning_criteria_and_meta(tmp_path):
    tpl = tmp_path / "mine.jinja"
    tpl.write_text("{#- eval752 mode=scale -#}\nQ={{ question }} R={{ reference }} A={{ response }} "
                   "T={{ reasoning }} C={{ criteria | join(',') }} topic={{ topic }}/{{ meta.topic }} "
                   "M={{ messages[-1].content }} [[rating]]")
    checker = bound(JudgeChecker, lambda p: "[[5]]", template=str(tpl))
    item = Item("q", "freeform", "Why?", answer="because", criteria=["short", "true"], meta={"topic": "sky"})
    v = asyncio.run(checker.acheck(item, Response(text="Rayleigh", reasoning="light scatters")))
    assert checker.client.prompts[0] == [{"role": "user", "content": (
        "Q=Why? R=because A=Rayleigh T=light scatters C=short,true topic=sky/sky M=Why? [[rating]]")}]
    assert v.score == 0.5


# -- pairwise: swap debiasing -------------------------------------------------------------------------------
@pytest.mark.parametrize("first,second,outcome,score,consistent", [
    ("[[A]]", "[[B]]", "win", 1.0, True),     # candidate preferred in both orders
    ("[[B]]", "[[A]]", "loss", 0.0, True),
    ("[[C]]", "[[C]]", "tie", 0.5, True),
    ("[[A]]", "[[A]]", "tie", 0.5, False),    # position bias: always the first answer
    ("[[A]]", "[[C]]", "tie", 0.5, False),
])
def test_pairwise_swap_debiasing(first, second, outcome, score, consistent):
    item = Item("p", "judge_pairwise", "Which is better?", meta={"response_a": "CAND", "response_b": "OTHER"})

    def reply(prompt):  # order ab shows the candidate as assistant A
        return first if prompt.index("CAND") < prompt.index("OTHER") else second

    v = asyncio.run(bound(PairwiseJudgeChecker, reply).acheck(item, Response(text="unused")))
    judge = v.details["judge"]
    assert (v.extracted, v.score, v.details["consistent"]) == (outcome, score, consistent)
    assert judge["orders"]["ab"]["output"] == first and judge["orders"]["ba"]["output"] == second
    assert judge["calls"] == 2 and judge["source"] == "meta.response_a vs meta.response_b"


def test_pairwise_live_response_against_baseline_and_unparseable():
    item = Item("p", "judge_pairwise", "Q?", meta={"baseline": "BASE"})

    def reply(prompt):
        return "[[A]] [[B]]" if prompt.index("LIVE") < prompt.index("BASE") else "[[A]]"

    v = asyncio.run(bound(PairwiseJudgeChecker, reply).acheck(item, Response(text="LIVE")))
    assert not v.answered and v.details["unparseable"] and "ab: conflicting verdicts [[A]] and [[B]]" in v.reason
    m = summarise([row(item, v)])["metrics"]
    assert m["judge_unparseable"]["count"] == 1 and m["judge_score"]["num"] == 0
    none = asyncio.run(bound(PairwiseJudgeChecker, reply).acheck(Item("x", "judge_pairwise", "Q"), Response("t")))
    assert not none.answered and "meta.baseline" in none.reason


def test_pairwise_summary_counts_outcomes_and_inconsistency():
    script = {"w": ("[[A]]", "[[B]]"), "l": ("[[B]]", "[[A]]"), "i": ("[[A]]", "[[A]]"), "t": ("[[C]]", "[[C]]")}
    rows = []
    for key in "wwlit":
        item = Item(key, "judge_pairwise", f"Q{key}", meta={"response_a": "CAND", "response_b": "OTHER"})
        checker = bound(PairwiseJudgeChecker, lambda p, k=key: script[k][0 if p.index("CAND") < p.index("OTHER")
                                                                           else 1])
        rows.append(row(item, asyncio.run(checker.acheck(item, Response(text="")))))
    m = summarise(rows)["metrics"]
    assert m["judge_score"]["value"] == pytest.approx((1 + 1 + 0 + 0.5 + 0.5) / 5)
    p = m["pairwise_inconsistent"]
    assert (p["count"], p["num"], p["wins"], p["ties"], p["losses"]) == (1, 5, 2, 2, 1)


# -- the sandbox -------------------------------------------------------------------------------------------
ESCAPES = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ question.__class__ }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{{ cycler.__init__.__globals__.os.environ }}",
    "{{ self._TemplateReference__context }}",
    "{{ meta.__class__.__base__ }}",
    "{% include '/etc/passwd' %}",
    "{% import 'os' as os %}{{ os }}",
    "{% extends '/etc/hostname' %}",
    "{{ response.format.__globals__ }}",
]


@pytest.mark.parametrize("source", ESCAPES)
def test_sandbox_escapes_fail_with_a_clear_error(tmp_path, source):
    tpl = tmp_path / "evil.jinja"
    tpl.write_text(source + " [[rating]]")
    with pytest.raises(ConfigError) as e:  # refused when the checker is built, before any request
        bound(JudgeChecker, lambda p: "[[5]]", template=str(tpl))
    assert isinstance(e.value, JudgeTemplateError)
    assert "refused by the sandbox" in str(e.value) and "evil.jinja" in str(e.value)


def test_unknown_variable_and_syntax_errors_name_the_template(tmp_path):
    tpl = load_template(str(_write(tmp_path / "t.jinja", "{{ respnse }} [[rating]]")))
    with pytest.raises(JudgeTemplateError, match=r"'respnse' is undefined; available variables: question"):
        tpl.render({"question": "q"})
    with pytest.raises(JudgeTemplateError, match=r"t2.jinja.*TemplateSyntaxError"):
        load_template(str(_write(tmp_path / "t2.jinja", "{% if %}")))


def _write(path, text):
    path.write_text(text)
    return path


# -- built-in templates and the official prompts file --------------------------------------------------------
def _official():
    path = realdata("mtbench", "judge_prompts.jsonl")
    return path, {json.loads(x)["name"]: json.loads(x) for x in path.read_text().splitlines() if x.strip()}


def test_builtin_templates_keep_the_official_mtbench_wording():
    _, off = _official()
    v = {"question": "Q?", "response": "R.", "reference": "REF", "response_a": "RA", "response_b": "RB"}
    single = load_template("mtbench_single_v1")
    assert single.mode == "scale" and single.system == off["single-v1"]["system_prompt"]
    assert single.render(v) == off["single-v1"]["prompt_template"].format(question="Q?", answer="R.")
    math = load_template("mtbench_single_math_v1")
    assert math.render(v) == off["single-math-v1"]["prompt_template"].format(question="Q?", answer="R.",
                                                                               ref_answer_1="REF")
    pair = load_template("mtbench_pair_v2")
    assert pair.mode == "pairwise" and pair.system is None
    assert pair.render(v) == off["pair-v2"]["system_prompt"] + "\n\n" + off["pair-v2"]["prompt_template"].format(
        question="Q?", answer_a="RA", answer_b="RB")


def test_prompts_file_gives_the_official_system_and_user_messages():
    path, off = _official()
    tpl = load_prompts_file(str(path), "pair-v2")
    assert tpl.mode == "pairwise"
    msgs = tpl.messages({"question": "Q", "answer_a": "x", "answer_b": "y"})
    assert msgs == [{"role": "system", "content": off["pair-v2"]["system_prompt"]},
                    {"role": "user", "content": off["pair-v2"]["prompt_template"].format(
                        question="Q", answer_a="x", answer_b="y")}]
    folded = tpl.messages({"question": "Q", "answer_a": "x", "answer_b": "y"}, system_in_user=True)
    assert len(folded) == 1 and folded[0]["content"].startswith(off["pair-v2"]["system_prompt"] + "\n\n")
    assert load_prompts_file(str(path), "single-v1").mode == "scale"
    with pytest.raises(ConfigError, match="did you mean 'single-v1'"):
        load_prompts_file(str(path), "single-v2")


# -- config errors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("judge,message", [
    ({"mode": "pairwise"}, "mode pairwise needs checker pairwise_judge"),
    ({"mode": "likert"}, "judge.mode must be one of scale, binary, pairwise"),
    ({"preprocess": ["strip_thinks"]}, "did you mean 'strip_think'"),
    ({"postprocess": ["parse_rating", "strip"]}, "must be the last step"),
    ({"postprocess": ["strip"]}, "must end with a parser"),
    ({"template": "mtbench_single"}, "unknown judge template 'mtbench_single'"),
    ({"provider": ProviderConfig(name="none", model="")}, "needs a judge model: add judge=sim"),
])
def test_config_errors(judge, message):
    checker = JudgeChecker()
    with pytest.raises(ConfigError, match=message):
        checker.bind_run_config(RunConfig(judge=JudgeConfig(**{"provider": FAKE, **judge})))


def test_checker_options_override_the_judge_section_and_unknown_options_fail():
    c = JudgeChecker(mode="binary")
    c.bind_run_config(RunConfig(judge=JudgeConfig(provider=FAKE, mode="scale")))
    assert c.spec.mode == "binary"
    with pytest.raises(ConfigError, match="did you mean 'template'"):
        JudgeChecker(templat="x")
