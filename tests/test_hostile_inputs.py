"""Hostile input through the real CLI: each bad input is refused with a clear message and exit status 2, no
traceback, nothing written outside the (new) run directory and nothing already on disk changed.

Every case gets its own workspace (``data/`` for inputs, ``out/`` as ``output_root``, the workspace as the
working directory). The files are hashed before and after the command; the only new files allowed are
under ``out/runs/`` (Hydra's run folder, which must hold no results), and the only changed ones are a
resumed run's ``.hydra/`` and log. All commands run concurrently in one fixture to keep the suite quick.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from conftest import last_line

GOOD = {"id": "a", "type": "mcq_single", "inputs": {"text": "Pick one."}, "choices": ["x", "y"], "answer": "x"}


def jl(*objs) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)


def put(ws: Path, rel: str, content: str | bytes) -> str:
    p = ws / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return rel


def folder(ws: Path, items: list[dict], assets: dict[str, bytes] | None = None) -> str:
    put(ws, "data/ds/sections/main.jsonl", jl(*items))
    for rel, data in (assets or {}).items():
        put(ws, f"data/ds/assets/{rel}", data)
    return "data/ds"


def with_image(path: str) -> dict:
    return {"id": "v", "type": "freeform", "inputs": {"text": "What is it?", "images": [path]}, "answer": "dot"}


def ds(rel: str, *extra: str) -> list[str]:
    return [f"dataset={rel}", "output_root=out", "progress=false", *extra]


_RUNS: dict[str, Path] = {}
_RUNS_LOCK = threading.Lock()


def real_run(ws: Path, items: list[dict], name: str = "a") -> Path:
    """A finished run (sim vendor) of ``data/<name>.jsonl`` inside ``ws``, to resume; returns its run directory.
    Each distinct run is made once (in its own folder) and copied: its config holds only relative paths."""
    with _RUNS_LOCK:
        if name not in _RUNS:
            home = Path(tempfile.mkdtemp(prefix=f"eval752-hostile-{name}-"))
            atexit.register(shutil.rmtree, home, True)
            data = put(home, f"data/{name}.jsonl", jl(*items))
            r = subprocess.run([sys.executable, "-m", "eval752.cli", *ds(data, "cache.enabled=false")], cwd=home,
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            _RUNS[name] = Path(last_line(r.stdout))
    made = _RUNS[name]
    home = made.parents[2]
    put(ws, f"data/{name}.jsonl", (home / "data" / f"{name}.jsonl").read_bytes())
    shutil.copytree(made, ws / "out" / "runs" / made.name)
    return ws / "out" / "runs" / made.name


def items(n: int, prefix: str = "q") -> list[dict]:
    return [{**GOOD, "id": f"{prefix}{i}", "inputs": {"text": f"{prefix} question {i}"}} for i in range(n)]


# ---- the cases: (workspace) -> command line -------------------------------------------------------------

def big_line(ws: Path) -> list[str]:
    p = ws / "data" / "huge.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "wb") as f:  # line 2 is 100 MB (a sparse run of NUL bytes), written in no time
        f.write(json.dumps(GOOD).encode() + b"\n")
        f.seek(100 * 1024 * 1024, os.SEEK_CUR)
        f.write(b"\n")
    return ds("data/huge.jsonl")


def asset_symlink(ws: Path) -> list[str]:
    put(ws, "secret.png", b"\x89PNG not yours")
    root = folder(ws, [with_image("link.png")])
    (ws / root / "assets").mkdir(parents=True)
    (ws / root / "assets" / "link.png").symlink_to(ws / "secret.png")
    return ds(root, "provider.vision=true")


def symlinked_section(ws: Path) -> list[str]:
    put(ws, "elsewhere/main.jsonl", jl(GOOD))
    (ws / "data/ds/sections").mkdir(parents=True)
    (ws / "data/ds/sections/main.jsonl").symlink_to(ws / "elsewhere/main.jsonl")
    return ds("data/ds")


def verifier(ws: Path, row: dict) -> list[str]:
    put(ws, "data/v.jsonl", jl({"messages": [{"role": "user", "content": "hi"}], **row}))
    return ["dataset=minimax_verifier", "dataset.path=data/v.jsonl", "output_root=out", "progress=false"]


def resume_other_dataset_config(ws: Path) -> list[str]:
    run = real_run(ws, items(3, "a"))
    put(ws, "data/b.jsonl", jl(*items(3, "b")))
    cfg = run / ".hydra" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("data/a.jsonl", "data/b.jsonl"))
    return [f"resume={run}", "progress=false"]


def resume_copied_results(ws: Path) -> list[str]:
    a = real_run(ws, items(3, "a"), "a")
    b = real_run(ws, items(3, "b"), "b")
    shutil.copyfile(a / "results.jsonl", b / "results.jsonl")
    return [f"resume={b}", "progress=false"]


def resume_corrupt_middle(ws: Path) -> list[str]:
    run = real_run(ws, items(3, "a"))
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1][: len(lines[1]) // 2] + "\n"
    (run / "results.jsonl").write_text("".join(lines))
    return [f"resume={run}", "progress=false"]


@dataclass
class Case:
    build: Callable[[Path], list[str]]
    needles: tuple[str, ...]
    env: dict = field(default_factory=dict)
    score: bool = False  # the eval752-score command


D = "data/d.jsonl"
CASES: dict[str, Case] = {
    "malformed_json": Case(lambda ws: ds(put(ws, D, jl(GOOD, "{not json"))),
                           (f"{D}:2: -: invalid JSON: Expecting property name enclosed in double quotes (column 2)",)),
    "invalid_utf8": Case(lambda ws: ds(put(ws, D, b'{"id": "a\xff"}\n')),
                         (f"{D}:1: -: invalid UTF-8: byte 0xff at byte offset 9 of the file",)),
    "bom": Case(lambda ws: ds(put(ws, D, b"\xef\xbb\xbf" + jl(GOOD).encode())),
                (f"{D}:1: -: file starts with a UTF-8 byte-order mark; save it without one",)),
    "line_of_100mb": Case(big_line, ("data/huge.jsonl:2: -: line is longer than 10000000 bytes; skipped",)),
    "duplicate_ids": Case(lambda ws: ds(put(ws, D, jl(GOOD, GOOD))),
                          (f"{D}:2: id: duplicate id 'a' (first at line 1)",)),
    "duplicate_key": Case(lambda ws: ds(put(ws, D, '{"id": "a", "id": "b"}\n')),
                          (f"{D}:1: -: invalid JSON: key 'id' appears twice in one object",)),
    "id_not_a_string": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "id": 5}))),
                            (f"{D}:1: id: expected a non-empty string, got number",)),
    "choices_not_a_list": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "choices": "xy"}))),
                               (f"{D}:1: choices: expected a list of strings, got string",)),
    "answer_not_among_choices": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "answer": "z"}))),
                                     (f"{D}:1: answer: 'z' is not one of the choices",)),
    "unknown_type": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "type": "essay"}))),
                         (f"{D}:1: type: unknown item type 'essay'",)),
    "unknown_field": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "answr": "x"}))),
                          (f"{D}:1: answr: unknown field 'answr' (did you mean 'answer'?)",)),
    "nan": Case(lambda ws: ds(put(ws, D, '{"id": "a", "type": "freeform", "inputs": {"text": "q"}, "answer": NaN}\n')),
                (f"{D}:1: -: invalid JSON: NaN is not allowed (write null or a number)",)),
    "infinity": Case(lambda ws: ds(put(ws, D, '{"id": "a", "type": "freeform", "inputs": {"text": "q"}, '
                                              '"params": {"temperature": -Infinity}}\n')),
                     (f"{D}:1: -: invalid JSON: -Infinity is not allowed (write null or a number)",)),
    "deeply_nested": Case(lambda ws: ds(put(ws, D, '{"id": "a", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}\n")),
                          (f"{D}:1: -: nesting deeper than 64 levels",)),
    "empty_file": Case(lambda ws: ds(put(ws, D, "\n\n")), (f"{D}:-: -: dataset has no items",)),
    "bad_item_params": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "params": {"temperature": -1, "temprature": 1}}))),
                            (f"{D}:1: params.temperature: expected a number >= 0, got -1",
                             f"{D}:1: params.temprature: unknown generation parameter 'temprature' "
                             "(did you mean 'temperature'?)")),
    "unknown_item_checker": Case(lambda ws: ds(put(ws, D, jl({**GOOD, "checker": "numerc"}))),
                                 ("cannot score these items:\nitem 'a': unknown checker 'numerc' "
                                  "(did you mean 'numeric'?)",)),
    "missing_asset": Case(lambda ws: ds(folder(ws, [with_image("nope.png")]), "provider.vision=true"),
                          ("data/ds/sections/main.jsonl:1: inputs.images[0]: asset 'nope.png' not found",)),
    "asset_dotdot": Case(lambda ws: ds(folder(ws, [with_image("../../secret.png")]), "provider.vision=true"),
                         ("inputs.images[0]: asset path '../../secret.png' escapes the dataset folder",)),
    "asset_absolute": Case(lambda ws: ds(folder(ws, [with_image("/etc/passwd")]), "provider.vision=true"),
                           ("inputs.images[0]: asset path '/etc/passwd' is absolute; give a path relative to assets/",)),
    "asset_symlink": Case(asset_symlink, ("inputs.images[0]: asset 'link.png' resolves outside the dataset folder",)),
    "folder_without_sections": Case(lambda ws: ds(put(ws, "data/ds/main.jsonl", jl(GOOD)) and "data/ds"),
                                    ("data/ds:-: -: folder has no sections/ folder",)),
    "symlinked_sections_file": Case(symlinked_section,
                                    ("data/ds/sections/main.jsonl:-: -: is a symbolic link to a file outside the "
                                     "dataset folder",)),
    "missing_dataset": Case(lambda ws: ds("data/nope.jsonl"),
                            ("dataset.path 'data/nope.jsonl': no such file or folder",)),
    "unknown_section": Case(lambda ws: ds(folder(ws, [GOOD]), "dataset.sections=[mian]"),
                            ("data/ds:-: sections: unknown section 'mian' (did you mean 'main'?)",)),
    "verifier_unknown_check_type": Case(lambda ws: verifier(ws, {"check_type": ["tool_call"]}),
                                        ("data/v.jsonl:1: check_type: unknown check 'tool_call' "
                                         "(did you mean 'tool_calls'?)",)),
    # configuration
    "bad_override_syntax": Case(lambda ws: ["provider.temperature=[1", "output_root=out"],
                                ("no viable alternative at input '[1'",)),
    "unknown_key": Case(lambda ws: ["provider.temprature=0.5", "output_root=out"],
                        ("unknown config key 'provider.temprature' (did you mean 'temperature'?)",)),
    "unknown_group_option": Case(lambda ws: ["provider=opneai", "output_root=out"],
                                 ("unknown provider option 'opneai' (did you mean 'openai'?)",)),
    "unknown_config_group": Case(lambda ws: ["+judje=strict", "output_root=out"],
                                 ("unknown config key 'judje'",)),
    "negative_samples": Case(lambda ws: ["samples=-2", "output_root=out"], ("samples must be >= 1, got -2",)),
    "non_integer_concurrency": Case(lambda ws: ["provider.concurrency=2.5", "output_root=out"],
                                    ("provider.concurrency",)),
    "negative_deadline": Case(lambda ws: ["provider.deadline=-1", "output_root=out"],
                              ("provider.deadline must be > 0 or null, got -1.0",)),
    "unknown_fault": Case(lambda ws: ["provider.sim.behaviours=[{name:faults,rates:{meteor:0.1}}]", "output_root=out"],
                          ("unknown fault 'meteor'",)),
    "missing_api_key": Case(lambda ws: ["provider=openai", "provider.api_key_env=EVAL752_NO_SUCH_KEY", "output_root=out"],
                            ("set the environment variable EVAL752_NO_SUCH_KEY",)),
    "unreachable_api_base": Case(lambda ws: ["provider=openai_compat", "provider.api_base=http://127.0.0.1:9/v1",
                                             "output_root=out"],
                                 ("cannot reach provider.api_base http://127.0.0.1:9/v1",)),
    # resume
    "resume_not_a_run_dir": Case(lambda ws: [f"resume={put(ws, 'data/x.txt', 'x') and ws / 'data'}"],
                                 ("no saved config at",)),
    "resume_other_dataset_config": Case(resume_other_dataset_config,
                                        ("its results were made with dataset version",
                                         "but the configured dataset is version")),
    "resume_copied_results": Case(resume_copied_results,
                                  ("results.jsonl has 3 rows for items or samples the configured dataset does not "
                                   "have (first: 'a0', 'a1', 'a2'); it was not made with this dataset",)),
    "resume_corrupt_middle_line": Case(resume_corrupt_middle,
                                       ("results.jsonl:2: -: not a JSON result row", "the file is corrupt")),
    # eval752-score
    "score_missing_input": Case(lambda ws: ["input=data/none.jsonl", "output_root=out"], ("data/none.jsonl",),
                                score=True),
    "score_garbage_input": Case(lambda ws: ["input=" + put(ws, "data/g.jsonl", b"\x00\xff garbage\n"),
                                            "output_root=out"], ("data/g.jsonl",), score=True),
}



def judge_template(ws: Path, source: str) -> list[str]:
    put(ws, "data/evil.jinja", source)
    data = put(ws, D, jl({"id": "f", "type": "freeform", "inputs": {"text": "Write a haiku."}, "answer": "haiku"}))
    return [*ds(data), "judge=sim", "checker.force=judge", "judge.template=data/evil.jinja"]


CASES["judge_template_includes_a_file"] = Case(
    lambda ws: judge_template(ws, '{% include "/etc/passwd" %} {{ response }}'),
    ("refused by the sandbox", "(judge templates may not include, import or read files)"))


# ---- running them ----------------------------------------------------------------------------------------

def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*"):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            out[rel] = h.hexdigest()
    return out


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")

    def one(name: str):
        ws = tmp_path_factory.mktemp(name)
        env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "EVAL752_NO_SUCH_KEY")}
        env["EVAL752_CACHE_DIR"] = str(cache)
        args = CASES[name].build(ws)
        before = snapshot(ws)
        module = "eval752.cli"
        if CASES[name].score:
            env["EVAL752_ENTRY"] = "score"
        r = subprocess.run([sys.executable, "-m", module, *args], cwd=ws, env=env, capture_output=True, text=True,
                           timeout=120)
        return ws, before, snapshot(ws), r

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(one, name) for name in CASES}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_refused_cleanly(outcomes, name):
    ws, before, after, r = outcomes[name]
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr + r.stdout
    for needle in CASES[name].needles:
        assert needle in r.stderr, (needle, r.stderr[-3000:])
    for rel, digest in before.items():
        if rel.startswith("out/runs/") and ("/.hydra/" in rel or rel.endswith("eval752.log")):
            continue  # Hydra records the resume command in the resumed run's .hydra/
        assert after.get(rel) == digest, f"{rel} changed or vanished"
    own = "out/scores/" if CASES[name].score else "out/runs/"
    for rel in set(after) - set(before):
        assert rel.startswith(own), f"{rel} written outside the run directory"
        assert not rel.endswith(("results.jsonl", "summary.json", "manifest.json")), rel


def test_bundle_attack_is_refused_through_the_command(tmp_path):
    """A zip-slip bundle through the real ``eval752-bundle`` command: exit 2, one message, nothing written."""
    import zipfile

    bundle = tmp_path / "evil.eval752.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr("manifest.json", "{}")
        z.writestr("../evil.txt", "x")
    target = tmp_path / "imported"
    code = "import sys; from eval752.bundle.cli import main; sys.exit(main())"
    r = subprocess.run([sys.executable, "-c", code, "import", str(bundle), str(target)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "entry '../evil.txt' climbs out of the bundle with '..'" in r.stderr and "Traceback" not in r.stderr
    assert not target.exists() and not (tmp_path.parent / "evil.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.eval752.zip"]


def test_there_are_at_least_thirty_distinct_cases():
    assert len(CASES) >= 30
