"""LLM judges end to end through the ``eval752`` command: the simulated vendor is both the model under test
and (as ``judge=sim``) the judge, each its own HTTP server on loopback.

Expected scores come from the sim judge's documented behaviour (eval752/providers/sim/judge.py), computed
here independently of the checkers: the judge server has no answer key, so a request is identified by
``"p:" + sha256(last user message)[:16]``; a ``[[rating]]`` prompt is answered ``Rating: [[N]]`` with
``N = 1 + int(draw(seed, item, None, "rating") * 10)`` and an ``[[A]]/[[B]]/[[C]]`` prompt ``[[X]]`` with
``X = "ABC"[int(draw(seed, item, None, "verdict") * 3)]`` (``settings.draw``; the judge sends no seed).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from statistics import fmean

import pytest

from conftest import last_line, read_rows, realdata, run_cli, write_items
from eval752.providers.sim.settings import draw

QUESTIONS = ["What is the capital of France?", "Name a primary colour.", "How many legs does a spider have?",
             "What is 12 times 12?", "Who wrote Hamlet?", "What gas do plants absorb?",
             "What is the boiling point of water in Celsius?", "Name the largest planet."]
ANSWERS = ["Paris", "red", "8", "144", "Shakespeare", "carbon dioxide", "100", "Jupiter"]
PAIRS = [("A calm and thorough answer.", "Short."), ("Yes.", "No, because the premise is false."),
         ("Rain taps the window", "I like rain."), ("Step 1, step 2, done.", "Done."),
         ("It depends on the context.", "42."), ("Photosynthesis uses light.", "Plants eat sunlight.")]


def sim_item(prompt: str) -> str:
    return "p:" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]


def sim_rating(prompt: str, seed: int = 0) -> int:
    return 1 + int(draw(seed, sim_item(prompt), None, "rating") * 10)


def sim_verdict(prompt: str, seed: int = 0) -> str:
    return "ABC"[int(draw(seed, sim_item(prompt), None, "verdict") * 3)]


def freeform(tmp_path: Path) -> Path:
    return write_items(tmp_path / "qa.jsonl", [
        {"id": f"q{i}", "type": "freeform", "inputs": {"text": q}, "answer": a}
        for i, (q, a) in enumerate(zip(QUESTIONS, ANSWERS))])


def pairwise(tmp_path: Path) -> Path:
    items = [{"id": f"p{i}", "type": "judge_pairwise", "inputs": {"text": f"Question {i}: respond well."},
              "meta": {"response_a": a, "response_b": b}} for i, (a, b) in enumerate(PAIRS)]
    items += [{"id": f"b{i}", "type": "judge_pairwise", "inputs": {"text": q}, "meta": {"baseline": a}}
              for i, (q, a) in enumerate(zip(QUESTIONS[:2], ANSWERS[:2]))]
    return write_items(tmp_path / "pairs.jsonl", items)


def run(tmp_path: Path, data: Path, *args: str):
    r = run_cli([f"dataset={data}", "judge=sim", f"output_root={tmp_path / 'out'}", "progress=false", *args],
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_dir = Path(last_line(r.stdout))
    return r, read_rows(run_dir), json.loads((run_dir / "summary.json").read_text())


def test_scale_judge_exact_scores_and_judge_calls_cached_on_second_run(tmp_path):
    data = freeform(tmp_path)
    _, rows, summary = run(tmp_path, data, "checker.force=judge")
    assert len(rows) == 8 and {r["checker"] for r in rows} == {"judge"}
    expected = {}
    for row in rows:
        judge = row["verdict"]["details"]["judge"]
        system, user = judge["input"]
        assert system == {"role": "system", "content": "You are a helpful assistant."}
        question = QUESTIONS[int(row["item_id"][1:])]
        assert f"[Question]\n{question}\n" in user["content"]
        assert f"[The Start of Assistant's Answer]\n{row['response']['text']}\n" in user["content"]
        n = sim_rating(user["content"])
        expected[row["item_id"]] = n / 10
        assert judge["output"] == f"Rating: [[{n}]]" and row["verdict"]["extracted"] == n
        assert row["verdict"]["score"] == n / 10
    js = summary["metrics"]["judge_score"]
    assert js["value"] == pytest.approx(fmean(expected.values()), abs=1e-6) and js["num"] == 8
    assert (js["unparseable"], js["judge_calls"], js["judge_requests_sent"], js["judge_cached"]) == (0, 8, 8, 0)
    assert summary["metrics"]["judge_unparseable"]["count"] == 0

    _, rows2, summary2 = run(tmp_path, data, "checker.force=judge")
    js2 = summary2["metrics"]["judge_score"]
    assert (js2["judge_requests_sent"], js2["judge_cached"], js2["judge_calls"]) == (0, 8, 8)
    assert summary2["run"]["requests_sent"] == 0
    assert {r["item_id"]: r["verdict"]["score"] for r in rows2} == expected


def test_unparseable_outputs_are_counted_exactly(tmp_path):
    # Two kinds in one run (per-item checker options): on a 1..5 scale the sim's ratings 6..10 are out of
    # range; and the sim's judge hook knows [[rating]] and [[A]]/[[B]] prompts only, so a [[YES]]/[[NO]]
    # prompt gets a plain sentence back, which parse_binary must refuse every time.
    items = [json.loads(x) for x in freeform(tmp_path).read_text().splitlines()]
    for it in items[6:]:
        it["checker"] = {"kind": "judge", "mode": "binary"}
    data = write_items(tmp_path / "mixed.jsonl", items)
    _, rows, summary = run(tmp_path, data, "checker.by_type.freeform=judge", "judge.scale_max=5")
    scale = [r for r in rows if r["verdict"]["details"]["judge"]["mode"] == "scale"]
    binary = [r for r in rows if r["verdict"]["details"]["judge"]["mode"] == "binary"]
    assert len(scale) == 6 and len(binary) == 2
    ratings = {r["item_id"]: sim_rating(r["verdict"]["details"]["judge"]["input"][-1]["content"]) for r in scale}
    high = [k for k, n in ratings.items() if n > 5]
    assert 0 < len(high) < 6  # this data has both kinds
    for r in scale:
        v = r["verdict"]
        if r["item_id"] in high:
            assert v["answered"] is False and v["details"]["unparseable"] is True
            assert v["reason"] == f"unparseable judge output: rating {ratings[r['item_id']]} outside 1..5"
            assert v["details"]["judge"]["output"] == f"Rating: [[{ratings[r['item_id']]}]]"
        else:
            assert v["score"] == round(ratings[r["item_id"]] / 5, 6)
    for r in binary:
        assert "[[YES]]" in r["verdict"]["details"]["judge"]["input"][-1]["content"]
        assert r["verdict"]["details"]["unparseable"] is True
        assert r["verdict"]["reason"] == "unparseable judge output: no [[YES]]/[[NO]] verdict"
    m = summary["metrics"]
    bad = len(high) + 2
    assert m["judge_unparseable"]["count"] == bad and m["judge_unparseable"]["num"] == 8
    assert m["judge_score"]["num"] == 8 - bad and m["judge_score"]["unparseable"] == bad
    low = [n / 5 for k, n in ratings.items() if k not in high]
    assert m["judge_score"]["value"] == pytest.approx(fmean(low), abs=1e-6)


def _expected_outcome(ab: str, ba: str) -> tuple[str, bool]:
    first = {"A": "win", "B": "loss", "C": "tie"}[ab]   # order ab: the candidate is assistant A
    second = {"B": "win", "A": "loss", "C": "tie"}[ba]  # order ba: the candidate is assistant B
    return (first, True) if first == second else ("tie", False)


def test_pairwise_swap_debiasing_counts(tmp_path):
    _, rows, summary = run(tmp_path, pairwise(tmp_path))
    assert {r["checker"] for r in rows} == {"pairwise_judge"} and len(rows) == 8
    counts = {"win": 0, "tie": 0, "loss": 0, "inconsistent": 0}
    for row in rows:
        item = row["item_id"]
        judge = row["verdict"]["details"]["judge"]
        ab, ba = (judge["orders"][k]["input"][-1]["content"] for k in ("ab", "ba"))
        cand, other = PAIRS[int(item[1:])] if item.startswith("p") else (row["response"]["text"],
                                                                         ANSWERS[int(item[1:])])
        assert ab.index(f"Assistant A's Answer]\n{cand}\n") < ab.index(f"Assistant B's Answer]\n{other}\n")
        assert ba.index(f"Assistant A's Answer]\n{other}\n") < ba.index(f"Assistant B's Answer]\n{cand}\n")
        v_ab, v_ba = sim_verdict(ab), sim_verdict(ba)
        assert (judge["orders"]["ab"]["verdict"], judge["orders"]["ba"]["verdict"]) == (v_ab, v_ba)
        outcome, consistent = _expected_outcome(v_ab, v_ba)
        assert row["verdict"]["extracted"] == outcome and row["verdict"]["details"]["consistent"] is consistent
        assert row["verdict"]["score"] == {"win": 1.0, "tie": 0.5, "loss": 0.0}[outcome]
        counts[outcome] += 1
        counts["inconsistent"] += not consistent
    assert counts["inconsistent"] and counts["inconsistent"] < 8  # this data has both kinds
    p = summary["metrics"]["pairwise_inconsistent"]
    assert (p["wins"], p["ties"], p["losses"], p["count"], p["num"]) == (
        counts["win"], counts["tie"], counts["loss"], counts["inconsistent"], 8)
    js = summary["metrics"]["judge_score"]
    assert js["value"] == pytest.approx((counts["win"] + 0.5 * counts["tie"]) / 8, abs=1e-6)
    assert js["judge_calls"] == 16 and js["judge_requests_sent"] == 16


def test_trial_judges_k_rows_and_prints_inputs_and_outputs(tmp_path):
    r, rows, summary = run(tmp_path, freeform(tmp_path), "checker.force=judge", "judge.trial=3")
    assert r.stderr.count("=== judge trial ") == 3 and "=== judge trial 3/3: item q" in r.stderr
    assert r.stderr.count("--- judge input ---") == 3 and r.stderr.count("--- judge output ---") == 3
    assert r.stderr.count("Rating: [[") >= 3 and "[Instruction]\nPlease act as an impartial judge" in r.stderr
    judged = [x for x in rows if not x["verdict"]["details"]["judge"].get("skipped")]
    assert len(judged) == 3
    assert all(x["verdict"]["reason"] == "not judged (judge.trial=3)" for x in rows if x not in judged)
    js = summary["metrics"]["judge_score"]
    assert (js["num"], js["trial_skipped"], js["judge_calls"]) == (3, 5, 3)


def test_official_prompts_file(tmp_path):
    # One run, two official prompts: pair-v2 from judge.* for the pairwise items, single-v1 as a per-item
    # checker option for freeform ones. pair-v2 keeps its instructions in the system prompt and the sim
    # judge reads only the user message, so judge.system_in_user=true (for judges without system
    # messages) is what makes it answer.
    prompts = realdata("mtbench", "judge_prompts.jsonl")
    official = {json.loads(x)["name"]: json.loads(x) for x in prompts.read_text().splitlines() if x.strip()}
    items = [json.loads(x) for x in pairwise(tmp_path).read_text().splitlines()]
    items += [{**json.loads(x), "checker": {"kind": "judge", "prompt_name": "single-v1", "system_in_user": False}}
              for x in freeform(tmp_path).read_text().splitlines()[:4]]
    data = write_items(tmp_path / "both.jsonl", items)
    _, rows, summary = run(tmp_path, data, f"judge.prompts_file={prompts}", "judge.prompt_name=pair-v2",
                           "judge.system_in_user=true")
    singles = [r for r in rows if r["checker"] == "judge"]
    pairs = [r for r in rows if r["checker"] == "pairwise_judge"]
    assert len(singles) == 4 and len(pairs) == 8
    for row in singles:
        system, user = row["verdict"]["details"]["judge"]["input"]
        assert system == {"role": "system", "content": official["single-v1"]["system_prompt"]}
        assert user["content"] == official["single-v1"]["prompt_template"].format(
            question=QUESTIONS[int(row["item_id"][1:])], answer=row["response"]["text"])
        assert row["verdict"]["score"] == sim_rating(user["content"]) / 10
    for row in pairs:
        for order in row["verdict"]["details"]["judge"]["orders"].values():
            assert len(order["input"]) == 1
            assert order["input"][0]["content"].startswith(official["pair-v2"]["system_prompt"] + "\n\n[User")
            assert order["verdict"] == sim_verdict(order["input"][0]["content"])
    assert summary["metrics"]["judge_unparseable"]["count"] == 0 and summary["metrics"]["judge_score"]["num"] == 12


def test_sandbox_escape_in_a_template_stops_the_run_with_a_clear_error(tmp_path):
    evil = tmp_path / "evil.jinja"
    evil.write_text("{{ lipsum.__globals__['os'].popen('id').read() }} [[rating]]")
    r = run_cli([f"dataset={freeform(tmp_path)}", "judge=sim", "checker.force=judge", f"judge.template={evil}",
                 f"output_root={tmp_path / 'out'}", "progress=false"], cwd=tmp_path)
    assert r.returncode == 2
    assert "refused by the sandbox" in r.stderr and "evil.jinja" in r.stderr and "uid=" not in r.stderr


def test_judge_checker_without_a_judge_model_fails_up_front(tmp_path):
    r = run_cli([f"dataset={freeform(tmp_path)}", "checker.force=judge", f"output_root={tmp_path / 'out'}",
                 "progress=false"], cwd=tmp_path)
    assert r.returncode == 2 and "needs a judge model: add judge=sim" in r.stderr
