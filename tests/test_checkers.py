"""Tests of the rule-based checkers: choice, choice_set, exact, regex, numeric."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import eval752.checkers  # noqa: F401  (registers the checkers)
from eval752.checkers.base import CHECKERS, DEFAULT_CHECKER_FOR_TYPE
from eval752.checkers.numeric import extract_final_number, gsm8k_reference
from eval752.errors import ConfigError, DatasetError
from eval752.types import Item, Response

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"

CAPITALS = ("Paris", "London", "Rome", "Berlin")
MCQ = Item(id="cap", type="mcq_single", text="Capital of the UK?", choices=CAPITALS, answer="London")


def check(kind: str, item: Item, text: str, **options):
    return CHECKERS.create(kind, **options).check(item, Response(text=text))


# (response, extracted letter or None, reason)
CHOICE_CASES = [
    ("B", "B", "extracted B, expected B"),
    ("b.", "B", "extracted B, expected B"),
    ("b", "B", "extracted B, expected B"),
    ("(B)", "B", "extracted B, expected B"),
    ("B)", "B", "extracted B, expected B"),
    ("**B**", "B", "extracted B, expected B"),
    ("Option B", "B", "extracted B, expected B"),
    ("Answer: B", "B", "extracted B, expected B"),
    ("Answer: b", "B", "extracted B, expected B"),
    ("The answer is (B)", "B", "extracted B, expected B"),
    ("The answer is: B", "B", "extracted B, expected B"),
    ("Answer - B", "B", "extracted B, expected B"),
    ("**Answer:** B", "B", "extracted B, expected B"),
    ("**Final Answer**: (D)", "D", "extracted D, expected B"),
    ("Let me think.\nFinal answer: B", "B", "extracted B, expected B"),
    ("Therefore, the answer is B because London is the capital.", "B", "extracted B, expected B"),
    ("the answer is c", "C", "extracted C, expected B"),
    ("answer: option d", "D", "extracted D, expected B"),
    ("answer is **C. Rome**", "C", "extracted C, expected B"),
    ("The correct option is D.", "D", "extracted D, expected B"),
    ("I choose B.", "B", "extracted B, expected B"),
    ("\\boxed{C}", "C", "extracted C, expected B"),
    ("$\\boxed{\\text{B}}$", "B", "extracted B, expected B"),
    # the last explicit statement wins
    ("Answer: A\nWait, actually the answer is C.", "C", "extracted C, expected B"),
    ("The answer is A... no. Final answer: B", "B", "extracted B, expected B"),
    # an explicit statement outranks a bare final line and marked letters
    ("(A) is wrong, (C) is wrong.\nAnswer: B\nC", "B", "extracted B, expected B"),
    # the final bare line outranks letters marked earlier
    ("(A) is tempting but (B) is right.\nB", "B", "extracted B, expected B"),
    ("A) Paris\nB) London\nC) Rome\nD) Berlin\n\nB", "B", "extracted B, expected B"),
    ("B. London", "B", "extracted B, expected B"),
    ("B\n\nExplanation: London is the capital of the UK.", "B", "extracted B, expected B"),
    ("Between the options, **B** fits.", "B", "extracted B, expected B"),
    ("I'd go with [C] here.", "C", "extracted C, expected B"),
    # option text
    ("London", "B", "extracted B, expected B"),
    ("The capital is London.", "B", "extracted B, expected B"),
    ("rome", "C", "extracted C, expected B"),
    # reasoning is removed first
    ("<think>It is A, surely (A).</think>B", "B", "extracted B, expected B"),
    ("<THINK>\nAnswer: D\n</THINK>\n\nAnswer: B", "B", "extracted B, expected B"),
    ("reasoning says A</think>\nB", "B", "extracted B, expected B"),
    ("<think>unfinished: the answer is A", None, "no answer outside <think>"),
    # ambiguous: counts as no answer
    ("(A) is tempting but (C) is right", None, "ambiguous: A and C both asserted"),
    ("Answer: A and C", None, "ambiguous: A and C both asserted"),
    ("Answer: AC", None, "ambiguous: A and C both asserted"),
    ("Paris or London", None, "ambiguous: A and B both asserted"),
    ("(A), (B) and (D) all look fine", None, "ambiguous: A, B and D all asserted"),
    # no answer
    ("A good question. Let me think.", None, "no option found"),
    ("A good question. The answer is B.", "B", "extracted B, expected B"),
    ("the answer is a bit unclear", None, "no option found"),
    ("I think it's hard to say", None, "no option found"),
    ("Answer: E", None, "no option found"),  # beyond the four choices
    ("E", None, "no option found"),
    ("(F) obviously", None, "no option found"),
    ("ADD", None, "no option found"),
    ("", None, "empty response"),
    ("   \n", None, "empty response"),
]


@pytest.mark.parametrize("text,letter,reason", CHOICE_CASES)
def test_choice_table(text, letter, reason):
    v = check("choice", MCQ, text)
    assert (v.extracted, v.reason) == (letter, reason)
    assert v.answered is (letter is not None)
    assert v.passed is (letter == "B")
    assert v.score == (1.0 if letter == "B" else 0.0)


def test_choice_table_is_large():
    assert len(CHOICE_CASES) >= 40


def test_choice_details_record_all_explicit_statements_and_out_of_range_letters():
    v = check("choice", MCQ, "Answer: A\nAnswer: E\nThe answer is B")
    assert v.extracted == "B"
    assert v.details == {"expected": ["B"], "method": "explicit", "explicit": [["A"], ["B"]], "out_of_range": ["E"]}


def test_choice_fifth_letter_is_an_option_when_there_are_five_choices():
    item = Item(id="five", type="mcq_single", text="q", choices=("1", "2", "3", "4", "5"), answer="5")
    v = check("choice", item, "Answer: E")
    assert (v.passed, v.extracted, v.reason) == (True, "E", "extracted E, expected E")


def test_choice_longer_option_text_hides_the_shorter_one():
    item = Item(id="p", type="mcq_single", text="q", choices=("Paris", "Paris, Texas"), answer="Paris, Texas")
    assert check("choice", item, "It is Paris, Texas.").extracted == "B"
    assert check("choice", item, "It is Paris.").extracted == "A"


def test_choice_failed_request():
    v = CHECKERS.create("choice").check(MCQ, Response(text="", error="timeout"))
    assert (v.score, v.answered, v.reason) == (0.0, False, "no response: timeout")


def test_choice_answer_must_be_one_of_the_choices():
    bad = Item(id="bad", type="mcq_single", text="q", choices=CAPITALS, answer="Madrid")
    with pytest.raises(DatasetError, match="item 'bad': answer 'Madrid' is not one of its choices"):
        check("choice", bad, "A")


COLOURS = ("red", "green", "blue", "yellow")
MULTI = Item(id="col", type="mcq_multi", text="Flag colours?", choices=COLOURS, answer=["red", "blue"])

# (response, extracted letters, exact score, F1)
CHOICE_SET_CASES = [
    ("A, C", ["A", "C"], 1.0, 1.0),
    ("A and C", ["A", "C"], 1.0, 1.0),
    ("Answer: AC", ["A", "C"], 1.0, 1.0),
    ("(A)(C)", ["A", "C"], 1.0, 1.0),
    ("**A** and **C**", ["A", "C"], 1.0, 1.0),
    ("answer: c and a", ["A", "C"], 1.0, 1.0),
    ("red and blue", ["A", "C"], 1.0, 1.0),
    ("Answer: A", ["A"], 0.0, 2 / 3),
    ("The answers are A, B and C.", ["A", "B", "C"], 0.0, 0.8),
    ("Answer: A and C\nFinal answer: A, C, D", ["A", "C", "D"], 0.0, 0.8),
    ("Answer: B, D", ["B", "D"], 0.0, 0.0),
]


@pytest.mark.parametrize("text,letters,exact,f1", CHOICE_SET_CASES)
def test_choice_set_table(text, letters, exact, f1):
    v = check("choice_set", MULTI, text)
    assert (v.extracted, v.score, v.passed) == (letters, exact, exact == 1.0)
    assert v.details["f1"] == pytest.approx(f1)
    partial = check("choice_set", MULTI, text, partial_credit=True)
    assert partial.score == pytest.approx(f1)
    assert partial.passed is (exact == 1.0)


def test_choice_set_details_and_reason():
    v = check("choice_set", MULTI, "The answers are A, B and C.")
    assert v.reason == "extracted A, B and C, expected A and C"
    assert v.details["precision"] == pytest.approx(2 / 3)
    assert v.details["recall"] == 1.0
    none = check("choice_set", MULTI, "no idea")
    assert (none.answered, none.reason, none.extracted, none.details["f1"]) == (False, "no option found", None, 0.0)


def test_defaults_for_item_types_exist():
    for item_type in ("mcq_single", "mcq_multi", "freeform"):
        assert DEFAULT_CHECKER_FOR_TYPE[item_type] in CHECKERS


FREE = Item(id="f", type="freeform", text="Capital of France?", answer="Paris")


@pytest.mark.parametrize(
    "text,passed,extracted,reason",
    [
        ("Paris", True, "Paris", "whole response matches 'Paris'"),
        ("paris.", True, "paris.", "whole response matches 'Paris'"),
        ("The Paris!", True, "The Paris!", "whole response matches 'Paris'"),
        ("ＰＡＲＩＳ", True, "ＰＡＲＩＳ", "whole response matches 'Paris'"),
        ("Let me think.\nParis", True, "Paris", "final line matches 'Paris'"),
        ("Answer: **Paris**\nThat's it.", True, "Paris", "answer statement matches 'Paris'"),
        ("The answer is Paris, France.", False, "Paris, France.",
         "answer statement 'paris france' does not match 'paris'"),
        ("The capital of France is Paris.", False, "The capital of France is Paris.",
         "whole response 'capital of france is paris' does not match 'paris'"),
        ("<think>Paris?</think>London", False, "London", "whole response 'london' does not match 'paris'"),
    ],
)
def test_exact(text, passed, extracted, reason):
    v = check("exact", FREE, text)
    assert (v.passed, v.score, v.extracted, v.reason) == (passed, float(passed), extracted, reason)


def test_exact_options_and_reference_lists():
    many = Item(id="m", type="freeform", text="q", answer=["NYC", "New York City"])
    assert check("exact", many, "new york city").reason == "whole response matches 'New York City'"
    assert check("exact", many, "Boston").reason == "whole response 'boston' does not match any of 2 references"
    assert check("exact", FREE, "paris", case_sensitive=True).reason == "whole response 'paris' does not match 'Paris'"
    assert check("exact", FREE, "PARIS ", normalize=False).passed
    assert not check("exact", FREE, "Paris.", normalize=False).passed
    num = Item(id="n", type="freeform", text="q", answer="3.5")
    assert not check("exact", num, "35").passed and check("exact", num, "3.5").passed


def test_regex():
    item = Item(id="r", type="freeform", text="q", answer=r"\b42\b")
    v = check("regex", item, "It is 42.")
    assert (v.passed, v.extracted, v.reason) == (True, "42", "search matched '42'")
    v = check("regex", item, "It is 420.")
    assert (v.passed, v.extracted, v.answered, v.reason) == (False, None, True, "pattern '\\\\b42\\\\b' not found")
    v = check("regex", item, " YES \n", pattern="yes", flags="i", mode="fullmatch")
    assert (v.passed, v.extracted) == (True, "YES")
    v = check("regex", item, "yes indeed", pattern="yes", mode="fullmatch")
    assert v.reason == "pattern 'yes' not fully matched"
    two = Item(id="r2", type="freeform", text="q", answer=["cat", "dog"])
    assert check("regex", two, "a dog").extracted == "dog"
    assert check("regex", two, "a cow").reason == "none of 2 patterns found"


def test_regex_bad_pattern_from_the_item():
    item = Item(id="r", type="freeform", text="q", answer="([")
    with pytest.raises(ConfigError, match=r"^checker 'regex': bad pattern '\(\[': unterminated character set"):
        check("regex", item, "x")


@pytest.mark.parametrize(
    "kind,options,message",
    [
        ("choice", {"x": 1}, "checker 'choice': unknown option 'x'; it takes no options"),
        ("choice_set", {"partial": True},
         "checker 'choice_set': unknown option 'partial' (did you mean 'partial_credit'?); "
         "valid options: partial_credit"),
        ("choice_set", {"partial_credit": 1},
         "checker 'choice_set': option 'partial_credit' must be true or false, not 1"),
        ("exact", {"normalise": True},
         "checker 'exact': unknown option 'normalise' (did you mean 'normalize'?); "
         "valid options: case_sensitive, normalize"),
        ("exact", {"normalize": "yes"}, "checker 'exact': option 'normalize' must be true or false, not 'yes'"),
        ("regex", {"patern": "x", "foo": 1},
         "checker 'regex': unknown options 'foo', 'patern'; valid options: flags, mode, pattern"),
        ("regex", {"pattern": "("},
         "checker 'regex': bad pattern '(': missing ), unterminated subpattern at position 0"),
        ("regex", {"flags": "q"}, "checker 'regex': flags must be letters among i, m, s, x, a, not 'q'"),
        ("regex", {"mode": "match"}, "checker 'regex': mode must be one of search, fullmatch, not 'match'"),
        ("numeric", {"tol": 1},
         "checker 'numeric': unknown option 'tol' (did you mean 'rel_tol'?); valid options: abs_tol, rel_tol"),
        ("numeric", {"abs_tol": -1}, "checker 'numeric': option 'abs_tol' must be a number >= 0, not -1"),
    ],
)
def test_option_errors(kind, options, message):
    with pytest.raises(ConfigError) as err:
        CHECKERS.create(kind, **options)
    assert str(err.value) == message


@pytest.mark.parametrize(
    "text,value",
    [
        ("1,234", 1234.0),
        ("$1,234.50", 1234.5),
        ("-3", -3.0),
        ("so x = \u22124", -4.0),
        ("3.0", 3.0),
        ("50%", 50.0),
        ("1/2", 0.5),
        ("\\boxed{\\frac{3}{4}}", 0.75),
        ("1.5e3", 1500.0),
        ("2.5E-2", 0.025),
        (".5", 0.5),
        ("1,23", 23.0),
        ("pages 10-12", 12.0),
        ("We have 3 apples and 4 pears, total 7.", 7.0),
        ("The answer is 72. Check: 70 + 2 = 72, or 73 - 1.", 72.0),
        ("Answer: $18 per day, so 5 more than before", 18.0),
        ("Answer:\n12 eggs, not 13", 13.0),
        ("She has 5 + 3 = 8 apples.\n#### 1,000", 1000.0),
        ("\\boxed{42} and then 7", 42.0),
        ("<think>99</think>The answer is 4", 4.0),
        ("3/0", None),
        ("no numbers here", None),
    ],
)
def test_extract_final_number(text, value):
    assert extract_final_number(text) == value


def test_gsm8k_reference():
    assert gsm8k_reference("Janet sells 9 eggs.\n#### 1,234 ") == "1234"
    with pytest.raises(ValueError):
        gsm8k_reference("no marker")


def test_numeric_checker():
    item = Item(id="n", type="freeform", text="q", answer="Reasoning 6 * 12 = 72\n#### 72")
    v = check("numeric", item, "So the total is $72.00.")
    assert (v.passed, v.extracted, v.reason) == (True, 72.0, "extracted 72, expected 72")
    assert v.details == {"expected": 72.0, "matched": "$72.00", "source": "last number"}
    v = check("numeric", item, "The answer is 71.5")
    assert (v.passed, v.reason) == (False, "extracted 71.5, expected 72")
    assert check("numeric", item, "71.5", abs_tol=0.5).passed
    assert check("numeric", item, "71", rel_tol=0.02).passed
    assert not check("numeric", item, "71", rel_tol=0.01).passed
    none = check("numeric", item, "I cannot tell")
    assert (none.answered, none.reason, none.extracted) == (False, "no number found", None)
    for reference in (0.5, "1/2", "50%", "$1,234.50"):
        got = {0.5: "0.5", "1/2": "0.50", "50%": "50", "$1,234.50": "1234.5"}[reference]
        assert check("numeric", Item(id="x", type="freeform", text="q", answer=reference), got).passed
    with pytest.raises(DatasetError, match="numeric reference 'many' is not a number"):
        check("numeric", Item(id="x", type="freeform", text="q", answer="many"), "3")


def test_gsm8k_realdata_references_score_their_own_answers():
    path = REALDATA / "gsm8k" / "test.jsonl"
    if not path.exists():
        pytest.skip(f"real data absent: {path}")
    checker = CHECKERS.create("numeric")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    right = wrong_accepted = 0
    for i, row in enumerate(rows):
        reference = gsm8k_reference(row["answer"])
        response = Response(text=row["answer"])
        right += checker.check(Item(id=str(i), type="freeform", text="", answer=reference), response).passed
        off_by_one = Item(id=str(i), type="freeform", text="", answer=float(reference) + 1)
        wrong_accepted += checker.check(off_by_one, response).passed
    assert (len(rows), right, wrong_accepted) == (1319, 1319, 0)
