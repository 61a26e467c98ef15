"""eval752.importers: every recorded-output format round-trips into scored rows with exact values, is
detected by ``format=auto``, runs live through ``items_from_file``, and fails on malformed rows with the
file, the line and what was expected."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from eval752.config import CheckerConfig, DiagnosticsConfig, ScoreConfig
from eval752.datasets import load_any
from eval752.errors import InputFormatError
from eval752.importers import csv_to_items, detect_format, items_from_file, read_records
from eval752.importers.rollup import model_metrics
from eval752.scoring import score_from_config


def jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def score(tmp_path: Path, src: Path, fmt: str = "auto", **kw) -> tuple[dict, list[dict]]:
    out = tmp_path / "out"
    cfg = ScoreConfig(input=str(src), format=fmt, diagnostics=DiagnosticsConfig(enabled=False), **kw)
    summary = score_from_config(cfg, out)
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return summary, rows


def user(text):
    return {"role": "user", "content": text}


def assistant(text, **extra):
    return {"role": "assistant", "content": text, **extra}


CHAT = [
    {"id": "c1", "messages": [{"role": "system", "content": "Be brief."}, user("What is 6*7?"),
                              assistant("The answer is 42", reasoning_content="6*7=42")],
     "ref_answer": "42", "temperature": 0.2, "max_tokens": 64, "top_p": 0.9, "top_k": 5, "topic": "math"},
    {"messages": [user("Capital of Japan?"), assistant("Kyoto")], "ref_answer": "Tokyo"},
    {"messages": [user("Say hi"), assistant("hi")]},
    {"id": "c4", "messages": [user("Closest planet?"), assistant("B")], "choices": ["Venus", "Mercury"],
     "ref_answer": "Mercury"},
]


def test_chat_rows_are_scored_by_the_same_checkers(tmp_path, capsys):
    src = jsonl(tmp_path / "chat.jsonl", CHAT)
    summary, rows = score(tmp_path, src)
    assert summary["format"] == "chat"
    assert [(r["item_id"], r["line"], r["checker"], (r["verdict"] or {}).get("passed")) for r in rows] == [
        ("c1", 1, "exact", True), ("line2", 2, "exact", False), ("line3", 3, "", None), ("c4", 4, "choice", True)]
    assert rows[2]["unscored"] is True
    assert rows[0]["request"] == {"messages": CHAT[0]["messages"][:2],
                                  "params": {"max_tokens": 64, "temperature": 0.2, "top_p": 0.9, "top_k": 5}}
    assert rows[0]["response"]["text"] == "The answer is 42" and rows[0]["response"]["reasoning"] == "6*7=42"
    assert summary["metrics"]["score"]["value"] == 0.666667 and summary["metrics"]["score"]["num"] == 3
    assert summary["counts"]["unscored"] == 1 and summary["counts"]["items"] == 3
    assert summary["by_type"]["mcq_single"]["score"]["value"] == 1.0


def test_chat_items_keep_params_and_custom_fields(tmp_path):
    src = jsonl(tmp_path / "chat.jsonl", CHAT)
    scored = {r.item.id: r.item for r in read_records(src, "chat")}
    assert scored["c1"].params == {"max_tokens": 64, "temperature": 0.2, "top_p": 0.9, "top_k": 5}
    assert scored["c1"].meta == {"topic": "math", "messages": CHAT[0]["messages"][:2]}
    assert scored["c1"].text == "What is 6*7?" and scored["c1"].answer == "42"
    assert scored["line3"].answer is None  # scoring: the final assistant turn is the response, not a reference
    live = {it.id: it for it in items_from_file(src)}
    assert live["line3"].answer == "hi"  # live: the final assistant turn is the reference
    assert live["c1"].answer == "42" and live["c4"].answer == "Mercury" and live["c4"].type == "mcq_single"
    assert live["line3"].meta == {"messages": [user("Say hi")]}


def test_checker_override_applies_to_imported_rows(tmp_path):
    src = jsonl(tmp_path / "chat.jsonl", [{"messages": [user("6*7?"), assistant("The answer is 42.0")],
                                           "ref_answer": "42"}])
    _, exact = score(tmp_path / "a", src)
    _, numeric = score(tmp_path / "b", src, checker=CheckerConfig(force="numeric"))
    assert (exact[0]["checker"], exact[0]["verdict"]["score"]) == ("exact", 0.0)
    assert (numeric[0]["checker"], numeric[0]["verdict"]["score"]) == ("numeric", 1.0)


CONVERSATION = [
    {"id": "v1", "system": "You are a calculator.", "conversation": [
        {"prompt": "2+2?", "response": "4"}, {"prompt": "times 10?", "response": "40"}],
     "ref_answer": "40", "judge_note": "x"},
    {"id": "v2", "conversation": [{"prompt": "Name a colour", "response": "blue"}]},
    {"id": "v3", "conversation": [{"prompt": "1+1?", "response": "3"}], "answer": 2},
]


def test_conversation_rows(tmp_path):
    src = jsonl(tmp_path / "conv.jsonl", CONVERSATION)
    summary, rows = score(tmp_path, src)
    assert summary["format"] == "conversation"
    assert [(r["item_id"], (r["verdict"] or {}).get("score")) for r in rows] == [("v1", 1.0), ("v2", None),
                                                                                   ("v3", 0.0)]
    assert rows[0]["request"]["messages"] == [
        {"role": "system", "content": "You are a calculator."}, user("2+2?"), assistant("4"), user("times 10?")]
    assert rows[2]["verdict"]["details"]["references"] == ["2"]
    assert summary["metrics"]["score"] == {"value": 0.5, "num": 2, "ci95": [0.094531, 0.905469],
                                           "failures": "counted as wrong"}
    live = {it.id: it for it in items_from_file(src, "conversation")}
    assert live["v2"].answer == "blue" and live["v1"].text == "times 10?"
    assert live["v1"].meta["judge_note"] == "x" and len(live["v1"].meta["messages"]) == 4


EVAL_ONLY = [
    {"id": "q1", "prompt": "What is 2+2?", "answer": "4", "model_outputs": [
        {"model_name": "m1", "responses": [{"content": "4"}, {"content": "5"}, {"content": "The answer is 4"}]},
        {"model_name": "m2", "responses": [{"content": "3"}, {"content": "3"}, {"content": "3"}]}]},
    {"id": "q2", "question": "Capital of France?", "answer": "Paris", "model_outputs": [
        {"model_name": "m1", "responses": [{"content": "Paris"}, {"content": "Paris"}, {"content": "Lyon"}]},
        {"model_name": "m2", "responses": [{"content": "Lyon"}, {"content": "Paris", "reasoning_content": "hmm"},
                                           {"content": None}]}]},
    {"id": "q3", "messages": [{"role": "system", "content": "Pick one."}, user("Closest planet to the Sun?")],
     "choices": ["Venus", "Mercury", "Earth"], "answer": "B", "model_outputs": [
        {"model_name": "m1", "responses": [{"content": "B"}, {"content": "B"}, {"content": "B"}]},
        {"model_name": "m2", "responses": [{"content": "A"}, {"content": "Answer: B"}, {"content": "C"}]}]},
]


def test_eval_only_rows_roll_up_per_model(tmp_path):
    src = jsonl(tmp_path / "eo.jsonl", EVAL_ONLY)
    summary, rows = score(tmp_path, src)
    assert summary["format"] == "eval_only" and len(rows) == 18
    assert [r["verdict"]["score"] if r["verdict"] else None for r in rows if r["model"] == "m2"] == [
        0.0, 0.0, 0.0, 0.0, 1.0, None, 0.0, 1.0, 0.0]
    failed = [r for r in rows if r["status"] == "error"]
    assert [(r["item_id"], r["sample"], r["model"]) for r in failed] == [("q2", 2, "m2")]
    assert rows[6]["request"]["messages"] == [user("Capital of France?")]
    assert summary["counts"]["samples"] == 3 and summary["counts"]["failed"] == 1
    m1, m2 = summary["models"]["m1"], summary["models"]["m2"]
    assert {k: v["value"] for k, v in m1.items()} == {
        "score": 0.777778, "best_of_n": 1.0, "pass@1": 0.777778, "pass@2": 1.0, "pass@3": 1.0, "spread": 0.19245}
    assert {k: v["value"] for k, v in m2.items()} == {
        "score": 0.222222, "best_of_n": 0.666667, "pass@1": 0.222222, "pass@2": 0.444444, "pass@3": 0.666667,
        "spread": 0.3849}
    assert m2["spread"] == {"value": 0.3849, "num": 3, "min": 0.0, "max": 0.666667, "means": [0.0, 0.666667, 0.0]}
    assert m2["best_of_n"] == {"value": 0.666667, "num": 3, "n": 3}
    live = items_from_file(src)
    assert [(it.id, it.type, it.answer) for it in live] == [("q1", "freeform", "4"), ("q2", "freeform", "Paris"),
                                                            ("q3", "mcq_single", "Mercury")]
    assert live[2].meta == {"messages": EVAL_ONLY[2]["messages"]}


def test_rollup_with_uneven_samples():
    rows = [{"item_id": "a", "sample": 0, "status": "ok", "verdict": {"score": 1.0}},
            {"item_id": "a", "sample": 1, "status": "ok", "verdict": {"score": 0.5}},
            {"item_id": "b", "sample": 0, "status": "ok", "verdict": {"score": 0.0}}]
    m = model_metrics(rows)
    assert m["best_of_n"] == {"value": 0.5, "num": 2, "n": 2}
    assert (m["pass@1"]["value"], m["pass@1"]["num"], m["pass@2"]["value"], m["pass@2"]["num"]) == (0.25, 2, 1.0, 1)
    assert m["spread"] == {"value": 0.0, "num": 2, "min": 0.5, "max": 0.5, "means": [0.5, 0.5]}


CSV_SCORED = 'id,prompt,answer,response,temperature,source\nk1,What is 2+2?,4,4,0.5,web\nk2,"Multi\nline?",yes,no,,book\n'


def test_csv_with_responses_and_as_a_live_dataset(tmp_path):
    src = tmp_path / "rows.csv"
    src.write_text(CSV_SCORED, encoding="utf-8")
    summary, rows = score(tmp_path, src)
    assert summary["format"] == "csv"
    assert [(r["item_id"], r["line"], r["verdict"]["passed"]) for r in rows] == [("k1", 2, True), ("k2", 3, False)]
    assert rows[0]["request"]["params"] == {"temperature": 0.5}
    plain = tmp_path / "plain.csv"
    plain.write_text("prompt,answer\nWhat is 3+3?,6\nName the red planet,Mars\n", encoding="utf-8")
    items = csv_to_items(plain)
    assert [(it.id, it.type, it.text, it.answer, dict(it.meta)) for it in items] == [
        ("line2", "freeform", "What is 3+3?", "6", {}), ("line3", "freeform", "Name the red planet", "Mars", {})]
    assert items_from_file(src)[1].meta == {"source": "book"}
    with pytest.raises(InputFormatError, match=rf"{plain}:1: response: no response column"):
        score(tmp_path / "x", plain)
    dataset, _ = load_any(plain, format="csv")  # the eval752 dataset loader runs it live
    assert [it.id for it in dataset.items] == ["line2", "line3"] and dataset.sections == ("plain",)


def test_detection(tmp_path):
    assert detect_format(jsonl(tmp_path / "a.jsonl", CHAT)) == "chat"
    assert detect_format(jsonl(tmp_path / "b.jsonl", CONVERSATION)) == "conversation"
    assert detect_format(jsonl(tmp_path / "c.jsonl", EVAL_ONLY)) == "eval_only"
    assert detect_format(jsonl(tmp_path / "d.jsonl", [{"item_id": "x", "sample": 0, "response": {},
                                                        "status": "ok"}])) == "eval752"
    assert detect_format(jsonl(tmp_path / "e.jsonl", [{"data_index": 1, "response": {}}])) == "verifier"
    assert detect_format(jsonl(tmp_path / "f.jsonl", [{"messages": [user("hi")]}])) == "jsonl"  # prompts only
    assert detect_format(tmp_path / "g.csv") == "csv"
    ann = tmp_path / "h.json.gz"
    ann.write_bytes(gzip.compress(json.dumps([{"instruction": "i", "output_1": "a", "generator_1": "base",
                                               "output_2": "b", "generator_2": "m", "preference": 2}]).encode()))
    assert detect_format(ann) == "alpaca_annotations"
    outs = tmp_path / "i.json"
    outs.write_text(json.dumps([{"instruction": "i", "output": "o", "generator": "m"}]))
    assert detect_format(outs) == "alpaca_outputs"
    other = tmp_path / "j.json"
    other.write_text(json.dumps([{"x": 1}]))
    with pytest.raises(InputFormatError, match=r"j.json:\[0\]: -: a JSON array .* expected AlpacaEval"):
        detect_format(other)


def test_alpaca_annotation_rows_in_process(tmp_path):
    ann = tmp_path / "m.annotations.json"
    prefs = [2.0, 1.0, 1.5, 1.75, None]
    ann.write_text(json.dumps([{"instruction": f"i{k}", "output_1": "a", "generator_1": "base", "output_2": "b",
                                "generator_2": "m", "preference": p} for k, p in enumerate(prefs)]))
    summary, rows = score(tmp_path, ann)
    assert summary["baseline"] == "base" and summary["counts"] == {"rows": 5, "unjudged": 1}
    m = summary["models"]["m"]
    assert (m["win_rate"], m["n_wins"], m["n_draws"], m["n_wins_base"]) == (
        {"value": 56.25, "num": 4}, {"value": 2, "num": 4}, {"value": 1, "num": 4}, {"value": 1, "num": 4})
    assert [r["verdict"]["score"] if r["verdict"] else None for r in rows] == [1.0, 0.0, 0.5, 0.75, None]


def _error(tmp_path: Path, name: str, rows: list, fmt: str = "auto") -> str:
    src = jsonl(tmp_path / name, rows)
    with pytest.raises(InputFormatError) as e:
        read_records(src, detect_format(src) if fmt == "auto" else fmt)
    return str(e.value).replace(str(src), name)


def test_malformed_rows_name_file_line_and_expectation(tmp_path):
    ok = CHAT[1]
    assert _error(tmp_path, "a.jsonl", [ok, {"messages": [user("q")], "ref_answer": "x"}]) == (
        "a.jsonl:2: messages: the last message must be the assistant's recorded response to score it "
        "(rows ending with a user turn can only be run live)")
    assert _error(tmp_path, "b.jsonl", [{"messages": [{"role": "bot", "content": "x"}, assistant("y")]}], "chat") == (
        "b.jsonl:1: messages[0].role: expected one of system, user, assistant, tool, got 'bot'")
    assert _error(tmp_path, "c.jsonl", [ok, "{broken"], "chat").startswith("c.jsonl:2: -: ")
    assert _error(tmp_path, "d.jsonl", [{**ok, "id": "a"}, {**ok, "id": "a"}], "chat") == (
        "d.jsonl:2: id: 'a' is already used by line 1")
    assert _error(tmp_path, "e.jsonl", [{**CHAT[3], "ref_answer": "Z"}], "chat") == (
        "e.jsonl:1: ref_answer: 'Z' is neither one of the choices ['Venus', 'Mercury'] nor an option letter")
    bad_eo = {**EVAL_ONLY[0], "model_outputs": [{"model_name": "m1", "responses": [{"content": "4"}, {"text": "x"}]}]}
    assert _error(tmp_path, "f.jsonl", [EVAL_ONLY[1], bad_eo]) == (
        'f.jsonl:2: model_outputs[0].responses[1]: expected an object with "content"')
    assert _error(tmp_path, "g.jsonl", [{"conversation": [{"prompt": "a", "response": 1}, {"prompt": "b",
                                                                                          "response": "c"}]}]) == (
        "g.jsonl:1: conversation[0].response: expected a string (an earlier turn)")
    # a format named wrongly says what it expected
    assert _error(tmp_path, "h.jsonl", EVAL_ONLY, "chat") == (
        'h.jsonl:1: messages: required field is missing; expected chat rows: {"messages": [...], "ref_answer": ...}')
    assert _error(tmp_path, "i.jsonl", CHAT, "conversation").startswith(
        "i.jsonl:1: conversation: expected a non-empty list of turns; conversation rows:")
    assert _error(tmp_path, "j.jsonl", [{"prompt": "q", "answer": "a"}], "eval_only").startswith(
        "j.jsonl:1: model_outputs: expected a non-empty list; eval-only rows:")


def test_malformed_csv(tmp_path):
    src = tmp_path / "bad.csv"
    src.write_text("prompt,response\nq,a\n")
    with pytest.raises(InputFormatError, match=rf"{src}:1: answer: missing column; expected a header with prompt"):
        read_records(src, "csv")
    src.write_text("prompt,answer,response\nq,a,b\nq2,a,b,extra\n")
    with pytest.raises(InputFormatError, match=rf"{src}:3: -: expected 3 columns"):
        read_records(src, "csv")
    src.write_text("prompt,answer,response,max_tokens\nq,a,b,many\n")
    with pytest.raises(InputFormatError, match=rf"{src}:2: max_tokens: expected a number, got 'many'"):
        read_records(src, "csv")
