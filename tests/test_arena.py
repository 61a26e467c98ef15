"""Tests of eval752.arena (win rate, swap debiasing, Bradley-Terry) and the AlpacaEval importers."""
from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import pytest

from eval752.arena import (
    WinRate,
    bootstrap_ratings,
    combine_swapped,
    fit_bradley_terry,
    leaderboard,
    preference_of,
    render_markdown,
    win_probability,
    win_rate,
    win_rate_swapped,
)
from eval752.datasets.alpaca_eval import load_alpaca_annotations, load_alpaca_outputs, preferences_by_model
from eval752.errors import InputFormatError

ALPACA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "alpaca_eval"
BASELINE = "gpt4_1106_preview"
OFFICIAL = {  # from the AlpacaEval 2 leaderboard (realdata/README.md)
    "alpaca-7b": (2.591450540223603, 0.4870855382635108, 17, 3),
    "NullModel": (76.91979180386511, 0.9090102449662572, 676, 0),
    BASELINE: (50.0, 0.0, 0, 805),
}
GAP_75 = 400 * math.log10(3)  # rating gap at which the stronger side wins 75% of the time


def alpaca(name: str) -> Path:
    path = ALPACA / name
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    return path


# --- AlpacaEval figures ------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", sorted(OFFICIAL))
def test_alpaca_eval_win_rates_reproduce_the_leaderboard(model):
    rows = load_alpaca_annotations(alpaca(f"{model}.annotations.json.gz"))
    assert len(rows) == 805
    assert {r["generator_1"] for r in rows} == {BASELINE}
    assert {r["generator_2"] for r in rows} == {"example" if model == "NullModel" else model}  # as published
    wr = win_rate([r["preference"] for r in rows])
    expected_rate, expected_se, expected_wins, expected_draws = OFFICIAL[model]
    assert wr.win_rate == pytest.approx(expected_rate, abs=1e-6)
    assert wr.standard_error == pytest.approx(expected_se, abs=1e-6)
    assert (wr.n_wins, wr.n_draws, wr.n_total) == (expected_wins, expected_draws, 805)


@pytest.mark.parametrize("model", sorted(OFFICIAL))
def test_alpaca_eval_cross_check_with_leaderboard_csv(model):
    with open(alpaca("leaderboard.csv"), newline="") as f:
        board = {row[""]: row for row in csv.DictReader(f)}
    official = board[model]
    (prefs,) = preferences_by_model(load_alpaca_annotations(alpaca(f"{model}.annotations.json.gz"))).values()
    wr = win_rate(prefs)
    assert wr.win_rate == pytest.approx(float(official["win_rate"]), abs=1e-6)
    assert wr.standard_error == pytest.approx(float(official["standard_error"]), abs=1e-6)
    assert wr.discrete_win_rate == pytest.approx(float(official["discrete_win_rate"]), abs=1e-6)
    for field in ("n_wins", "n_wins_base", "n_draws", "n_total"):
        assert getattr(wr, field) == int(official[field]), field


def test_alpaca_eval_model_outputs_load():
    rows = load_alpaca_outputs(alpaca("alpaca-7b.model_outputs.json.gz"))
    assert len(rows) == 805 and {r["generator"] for r in rows} == {"alpaca-7b"}
    annotations = load_alpaca_annotations(alpaca("alpaca-7b.annotations.json.gz"))
    assert [r["instruction"] for r in rows] == [a["instruction"] for a in annotations]
    assert [r["output"] for r in rows] == [a["output_2"] for a in annotations]


def test_bradley_terry_on_alpaca_eval_matches_the_win_rate():
    battles = []
    for model in ("alpaca-7b", "NullModel"):
        rows = load_alpaca_annotations(alpaca(f"{model}.annotations.json.gz"))
        battles += [(r["generator_1"], model, r["preference"]) for r in rows]
    ratings = fit_bradley_terry(battles, anchor=BASELINE, prior=0)
    assert ratings[BASELINE] == 1000.0
    for model in ("alpaca-7b", "NullModel"):  # a star around the baseline: each gap is the logit of its win rate
        share = win_rate([b[2] for b in battles if b[1] == model]).win_rate / 100
        assert ratings[model] - 1000 == pytest.approx(400 * math.log10(share / (1 - share)), abs=1e-6)
    assert ratings["NullModel"] > ratings[BASELINE] > ratings["alpaca-7b"]


# --- AlpacaEval loader errors -------------------------------------------------------------------------------

def _annotation(**over):
    row = {"instruction": "hi", "output_1": "a", "generator_1": "base", "output_2": "b", "generator_2": "m",
           "preference": 2.0}
    row.update(over)
    return row


def _write(path: Path, value, *, gz: bool = False) -> Path:
    data = (json.dumps(value) if not isinstance(value, str) else value).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_annotations_load_plain_and_gzip(tmp_path):
    rows = [_annotation(preference=1), _annotation(preference=1.5, extra="kept"), _annotation(preference=None)]
    for gz in (False, True):
        got = load_alpaca_annotations(_write(tmp_path / f"x{gz}.annotations.json", rows, gz=gz))
        assert [r["preference"] for r in got] == [1.0, 1.5, None]
        assert got[1]["extra"] == "kept"
    assert preferences_by_model(got) == {"m": [1.0, 1.5]}


def test_nan_preference_loads_as_missing(tmp_path):
    path = _write(tmp_path / "nan.json", "[" + json.dumps(_annotation()).replace("2.0", "NaN") + "]")
    assert load_alpaca_annotations(path)[0]["preference"] is None


@pytest.mark.parametrize("content, message", [
    ({"a": 1}, "expected a JSON array of annotations, got object"),
    ("[1, ", "not valid JSON"),
    ([_annotation(), 5], r"\[1\]: expected an object, got number"),
    ([_annotation(), _annotation(output_2=None)], r"\[1\] output_2: expected a string, got null"),
    ([{k: v for k, v in _annotation().items() if k != "generator_2"}], r"\[0\] generator_2: required field is missing"),
    ([{k: v for k, v in _annotation().items() if k != "preference"}], r"\[0\] preference: required field is missing"),
    ([_annotation(preference="2")], r"\[0\] preference: expected a number in \[1, 2\] or null, got string"),
    ([_annotation(preference=True)], r"\[0\] preference: expected a number in \[1, 2\] or null, got boolean"),
    ([_annotation(), _annotation(), _annotation(preference=2.5)], r"\[2\] preference: 2.5 is outside \[1, 2\]"),
])
def test_malformed_annotations_name_file_index_and_field(tmp_path, content, message):
    path = _write(tmp_path / "bad.annotations.json", content)
    with pytest.raises(InputFormatError, match=rf"^{path}: .*{message}"):
        load_alpaca_annotations(path)


def test_malformed_outputs_and_missing_files(tmp_path):
    ok = {"instruction": "i", "output": "o", "generator": "g"}
    assert load_alpaca_outputs(_write(tmp_path / "ok.json", [ok])) == [ok]
    with pytest.raises(InputFormatError, match=r"\[1\] output: expected a string, got number"):
        load_alpaca_outputs(_write(tmp_path / "o.json", [ok, {**ok, "output": 3}]))
    with pytest.raises(InputFormatError, match=r"\[0\] dataset: expected a string, got array"):
        load_alpaca_outputs(_write(tmp_path / "d.json", [{**ok, "dataset": []}]))
    with pytest.raises(InputFormatError, match="expected a JSON array of model outputs, got string"):
        load_alpaca_outputs(_write(tmp_path / "s.json", '"text"'))
    with pytest.raises(InputFormatError, match="no such file"):
        load_alpaca_outputs(tmp_path / "absent.json")
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08garbage")
    with pytest.raises(InputFormatError, match="cannot read"):
        load_alpaca_outputs(broken)


# --- win rate ----------------------------------------------------------------------------------------------

def test_win_rate_of_categorical_verdicts():
    wr = win_rate(["A", "B", "B", "tie", "[[C]]", "b"])
    assert wr == WinRate(win_rate=pytest.approx(100 * 4 / 6), standard_error=wr.standard_error, n_wins=3,
                         n_wins_base=1, n_draws=2, n_total=6, discrete_win_rate=pytest.approx(100 * 4 / 6))
    scores = [0, 100, 100, 50, 50, 100]
    mean = sum(scores) / 6
    assert wr.standard_error == pytest.approx(math.sqrt(sum((s - mean) ** 2 for s in scores) / 5 / 6), abs=1e-12)


def test_win_rate_edge_cases():
    assert win_rate([1.5] * 4) == WinRate(50.0, 0.0, 0, 0, 4, 4, 50.0)
    assert math.isnan(win_rate([2]).standard_error)
    with pytest.raises(ValueError, match="at least one preference"):
        win_rate([])
    with pytest.raises(ValueError, match=r"must lie in \[1, 2\], not 0.5"):
        win_rate([0.5])
    with pytest.raises(ValueError, match="unknown pairwise verdict 'D'"):
        preference_of("D")
    with pytest.raises(ValueError, match=r"must lie in \[1, 2\], not nan"):
        preference_of(float("nan"))


@pytest.mark.parametrize("ab, ba, expected", [
    ("A", "B", (1.0, True)),     # baseline better in both orders
    ("B", "A", (2.0, True)),     # model better in both orders
    ("tie", "tie", (1.5, True)),
    ("C", "tie", (1.5, True)),
    ("A", "A", (1.5, False)),    # the judge always picks the first position
    ("B", "B", (1.5, False)),    # ... or always the second
    ("A", "tie", (1.5, False)),  # a win against a tie is a disagreement too
    ("tie", "A", (1.5, False)),
    (2, 1, (2.0, True)),
    (1.0, 2.0, (1.0, True)),
])
def test_combine_swapped(ab, ba, expected):
    assert combine_swapped(ab, ba) == expected


def test_combine_swapped_rejects_soft_preferences_and_counts_inconsistency():
    with pytest.raises(ValueError, match="categorical verdicts"):
        combine_swapped(1.7, "A")
    wr = win_rate_swapped([("B", "A"), ("B", "A"), ("A", "B"), ("A", "A"), ("B", "B")])
    assert (wr.win_rate, wr.n_wins, wr.n_wins_base, wr.n_draws, wr.n_inconsistent) == (60.0, 2, 1, 2, 2)


# --- Bradley-Terry -----------------------------------------------------------------------------------------

def test_two_players_three_to_one_is_a_gap_of_400_log10_3():
    battles = [("x", "y", "A")] * 3 + [("x", "y", "B")]
    r = fit_bradley_terry(battles, anchor="y", prior=0)
    assert r["y"] == 1000.0
    assert r["x"] - r["y"] == pytest.approx(GAP_75, abs=1e-6)
    assert GAP_75 == pytest.approx(190.848501887865, abs=1e-9)
    assert win_probability(r["x"], r["y"]) == pytest.approx(0.75, abs=1e-9)


def test_ties_count_half_each_way():
    r = fit_bradley_terry([("x", "y", "A"), ("x", "y", "tie")], prior=0)  # 1.5 points to 0.5
    assert r["x"] - r["y"] == pytest.approx(GAP_75, abs=1e-6)
    assert (r["x"] + r["y"]) / 2 == pytest.approx(1000.0, abs=1e-9)
    soft = fit_bradley_terry([("x", "y", 1.25), ("x", "y", 1.25)], prior=0)  # x scores 0.75 of each
    assert soft["x"] - soft["y"] == pytest.approx(GAP_75, abs=1e-6)


def test_symmetric_results_give_equal_ratings():
    battles = [("a", "b", "A"), ("a", "b", "B"), ("b", "c", "A"), ("b", "c", "B"), ("c", "a", "tie")]
    for prior in (0, 0.1):
        r = fit_bradley_terry(battles, prior=prior)
        assert all(v == pytest.approx(1000.0, abs=1e-9) for v in r.values())


def test_three_player_cycle_free_ordering_and_custom_scale():
    battles = ([("a", "b", "A")] * 3 + [("a", "b", "B")] + [("b", "c", "A")] * 3 + [("b", "c", "B")]
               + [("a", "c", "A")] * 9 + [("a", "c", "B")])
    r = fit_bradley_terry(battles, prior=0, anchor="c", anchor_rating=0)
    assert r["c"] == 0 and r["a"] > r["b"] > 0
    # P(a>b)=3/4, P(b>c)=3/4, P(a>c)=9/10 is exactly consistent with strengths 9:3:1
    assert r["b"] == pytest.approx(GAP_75, abs=1e-6) and r["a"] == pytest.approx(2 * GAP_75, abs=1e-6)
    natural = fit_bradley_terry(battles, prior=0, anchor="c", anchor_rating=0, scale=1, base=math.e)
    assert natural["a"] == pytest.approx(math.log(9), abs=1e-9)


def test_a_model_that_wins_every_battle_ranks_first():
    battles = [("champ", "b", "A"), ("c", "champ", "B"), ("champ", "d", "A"), ("b", "c", "A"), ("c", "d", "tie"),
               ("d", "b", "tie"), ("c", "b", "A")]
    with pytest.raises(ValueError, match=r"unbounded with prior=0: 'champ' never lost a point to the other models"):
        fit_bradley_terry(battles, prior=0)
    r = fit_bradley_terry(battles)
    assert max(r, key=r.get) == "champ" and all(math.isfinite(v) for v in r.values())
    rows = leaderboard(battles, rounds=50, seed=1)
    assert rows[0]["model"] == "champ" and rows[0]["rank"] == 1
    assert (rows[0]["battles"], rows[0]["wins"], rows[0]["losses"], rows[0]["ties"]) == (3, 3, 0, 0)


def test_bad_battles_are_rejected():
    with pytest.raises(ValueError, match="battle 0: a model cannot battle itself"):
        fit_bradley_terry([("a", "a", "A")])
    with pytest.raises(ValueError, match="battle 1: unknown pairwise verdict 'X'"):
        fit_bradley_terry([("a", "b", "A"), ("a", "b", "X")])
    with pytest.raises(ValueError, match="anchor 'z' is not among the models: a, b"):
        fit_bradley_terry([("a", "b", "A")], anchor="z")


def test_bootstrap_is_seeded_and_brackets_the_rating():
    battles = [("x", "y", "A")] * 30 + [("x", "y", "B")] * 10 + [("y", "z", "A")] * 20 + [("y", "z", "B")] * 20
    first = bootstrap_ratings(battles, rounds=100, seed=7, anchor="y")
    assert first == bootstrap_ratings(battles, rounds=100, seed=7, anchor="y")
    assert first != bootstrap_ratings(battles, rounds=100, seed=8, anchor="y")
    point = fit_bradley_terry(battles, anchor="y")
    for model, (low, high) in first.items():
        assert low <= point[model] <= high
    assert first["y"] == (1000.0, 1000.0)


def test_leaderboard_rows_and_markdown():
    battles = [("a", "b", "A"), ("a", "b", "A"), ("a", "b", "B"), ("b", "c", "tie"), ("c", "b", "tie")]
    rows = leaderboard(battles, rounds=0, prior=0, anchor="b")
    assert [(r["rank"], r["model"]) for r in rows] == [(1, "a"), (2, "b"), (2, "c")]
    assert rows[0]["rating"] == pytest.approx(1000 + 400 * math.log10(2), abs=1e-6)
    assert rows[1]["ci_low"] is None
    tallies = [(r["battles"], r["wins"], r["losses"], r["ties"]) for r in rows]
    assert tallies == [(3, 2, 1, 0), (5, 1, 2, 2), (2, 0, 0, 2)]
    assert render_markdown(rows) == (
        "| rank | model | rating | 95% CI | battles | wins | losses | ties |\n"
        "|---:|---|---:|---|---:|---:|---:|---:|\n"
        "| 1 | a | 1120.4 |  | 3 | 2 | 1 | 0 |\n"
        "| 2 | b | 1000.0 |  | 5 | 1 | 2 | 2 |\n"
        "| 2 | c | 1000.0 |  | 2 | 0 | 0 | 2 |\n")
    with_ci = leaderboard(battles, rounds=20, seed=0)
    assert all(r["ci_low"] <= r["rating"] <= r["ci_high"] for r in with_ci)
    assert " to " in render_markdown(with_ci).splitlines()[2]
