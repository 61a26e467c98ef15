"""``.eval752.zip`` bundles: deterministic export, round trips of datasets and runs, custom checkers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import last_line, read_rows, run_cli

from eval752.bundle.checkers import load_checkers
from eval752.bundle.cli import main as bundle_main
from eval752.datasets import load_dataset
from eval752.errors import ConfigError

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")


def dataset_folder(tmp_path: Path, spaced: bool = False) -> Path:
    root = tmp_path / ("spaced" if spaced else "plain") / "geo"
    (root / "sections").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / "assets" / "map.png").write_bytes(PNG)
    rows = {
        "capitals": [{"id": "c1", "type": "freeform", "inputs": {"text": "Capital of France?"}, "answer": "Paris"},
                     {"id": "c2", "type": "mcq_single", "inputs": {"text": "Capital of Japan?"},
                      "choices": ["Kyoto", "Tokyo"], "answer": "Tokyo"}],
        "maps": [{"id": "m1", "type": "freeform", "inputs": {"text": "Which country?", "images": ["map.png"]},
                  "answer": "Chile", "meta": {"z": 1, "a": 2}}],
        "rivers": [{"id": "r1", "type": "freeform", "inputs": {"text": "Longest river?"}, "answer": "Nile"}],
    }
    for name, items in rows.items():
        if spaced:  # other key order and whitespace: same content
            text = "".join(json.dumps(dict(reversed(list(it.items()))), indent=None, separators=(" , ", " : "))
                           + "\n\n" for it in items)
        else:
            text = "".join(json.dumps(it) + "\n" for it in items)
        (root / "sections" / f"{name}.jsonl").write_text(text)
    return root


def bundle(*args: str) -> None:
    bundle_main(list(args))


def test_dataset_export_is_deterministic_and_hashed(tmp_path, capsys):
    a, b = dataset_folder(tmp_path), dataset_folder(tmp_path, spaced=True)
    bundle("export", str(a), "-o", str(tmp_path / "a.eval752.zip"), "--description", "geography")
    bundle("export", str(b), "-o", str(tmp_path / "b.eval752.zip"), "--description", "geography")
    assert (tmp_path / "a.eval752.zip").read_bytes() == (tmp_path / "b.eval752.zip").read_bytes()
    dataset = load_dataset(a)
    with zipfile.ZipFile(tmp_path / "a.eval752.zip") as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == sorted(i.filename for i in infos) == [
            "assets/map.png", "manifest.json", "meta.json", "sections/capitals.jsonl", "sections/maps.jsonl",
            "sections/rivers.jsonl"]
        assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.external_attr >> 16 for i in infos} == {0o100644}
        meta = json.loads(zf.read("meta.json"))
        manifest = json.loads(zf.read("manifest.json"))
    assert meta == {"name": "geo", "description": "geography", "version_hash": dataset.version_hash,
                    "schema_version": 1}
    assert manifest["format"] == "eval752.bundle" and manifest["format_version"] == 1
    assert manifest["kind"] == "dataset" and manifest["created"] == "1980-01-01T00:00:00Z"
    assert manifest["generator"] == "eval752 0.1.0"
    assert manifest["sections"] == [{"name": "capitals", "file": "sections/capitals.jsonl", "items": 2},
                                    {"name": "maps", "file": "sections/maps.jsonl", "items": 1},
                                    {"name": "rivers", "file": "sections/rivers.jsonl", "items": 1}]
    assert manifest["counts"] == {"sections": 3, "items": 4, "assets": 1, "checkers": 0}
    assert sorted(manifest["entries"]) == ["assets/map.png", "meta.json", "sections/capitals.jsonl",
                                           "sections/maps.jsonl", "sections/rivers.jsonl"]
    out = capsys.readouterr().out
    assert f"exported dataset bundle: 4 items, version {dataset.version_hash}" in out


def test_sections_export_import_verify_inspect(tmp_path, capsys):
    src = dataset_folder(tmp_path)
    zpath = tmp_path / "part.eval752.zip"
    bundle("export", str(src), "-o", str(zpath), "--sections", "maps,rivers")
    bundle("verify", str(zpath))
    selected = load_dataset(src, sections=["maps", "rivers"])
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"ok: dataset bundle, 2 items in 2 sections, 5 entries, hashes and counts match, "
        f"version {selected.version_hash}")
    bundle("inspect", str(zpath))
    shown = capsys.readouterr().out
    assert "kind:       dataset (format eval752.bundle v1)" in shown
    assert "  maps: 1 items\n  rivers: 1 items\n" in shown and "assets/map.png" in shown
    bundle("import", str(zpath), str(tmp_path / "imported"))
    assert capsys.readouterr().out.splitlines() == ["imported dataset bundle: 2 items", str(tmp_path / "imported")]
    back = load_dataset(tmp_path / "imported")
    assert back.version_hash == selected.version_hash and back.sections == ("maps", "rivers")
    assert (tmp_path / "imported" / "assets" / "map.png").read_bytes() == PNG
    # importing over a folder that holds something is refused
    with pytest.raises(SystemExit) as exc:
        bundle("import", str(zpath), str(tmp_path / "imported"))
    assert exc.value.code == 2
    assert "already exists and is not an empty folder" in capsys.readouterr().err


def test_custom_checkers_are_never_run_without_trust(tmp_path, capsys):
    code = tmp_path / "shouting.py"
    marker = tmp_path / "ran.txt"
    code.write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "from eval752.checkers.base import CHECKERS, Checker\n"
        "from eval752.types import Verdict\n"
        "@CHECKERS.register('bundle_test_shouting')\n"
        "class Shouting(Checker):\n"
        "    def check(self, item, response):\n"
        "        ok = response.text.isupper()\n"
        "        return Verdict(score=float(ok), passed=ok, reason='caps' if ok else 'quiet')\n")
    zpath = tmp_path / "c.eval752.zip"
    bundle("export", str(dataset_folder(tmp_path)), "-o", str(zpath), "--checker", str(code))
    bundle("inspect", str(zpath))
    assert "checkers/shouting.py  (checker code: never run unless imported with --trust-checkers)" in (
        capsys.readouterr().out)
    bundle("verify", str(zpath))
    bundle("import", str(zpath), str(tmp_path / "untrusted"))
    err = capsys.readouterr().err
    assert err == ("eval752-bundle: note: the bundle holds 1 custom checker file(s) (checkers/shouting.py); not "
                   "written (code: pass --trust-checkers to accept them)\n")
    assert not (tmp_path / "untrusted" / "checkers").exists() and not marker.exists()
    bundle("import", str(zpath), str(tmp_path / "trusted"), "--trust-checkers")
    folder = tmp_path / "trusted" / "checkers"
    assert (folder / "shouting.py").read_text() == code.read_text() and not marker.exists()
    with pytest.raises(ConfigError, match="refusing to run checker code"):
        load_checkers(folder)
    assert not marker.exists()
    load_checkers(folder, trust=True)
    assert marker.read_text() == "ran"
    from eval752.checkers.base import CHECKERS

    assert "bundle_test_shouting" in CHECKERS


def run_score(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from eval752.cli import score_main; sys.argv[0] = 'eval752-score'; score_main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_run_bundle_rescores_and_reproduces(tmp_path, capsys):
    first = run_cli(["dataset=mmlu_sample", f"output_root={tmp_path / 'orig'}", "progress=false",
                     "cache.enabled=false", "provider.sim.accuracy.mcq_single=0.6"], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run = Path(last_line(first.stdout))
    zpath = tmp_path / "run.eval752.zip"
    bundle("export", str(run), "-o", str(zpath))
    bundle("export", str(run), "-o", str(tmp_path / "again.eval752.zip"))
    assert zpath.read_bytes() == (tmp_path / "again.eval752.zip").read_bytes()
    with zipfile.ZipFile(zpath) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        config = json.loads(zf.read("run_config.json"))
    assert manifest["kind"] == "run" and manifest["counts"]["results"] == 20 and manifest["counts"]["items"] == 20
    assert config["provider"]["sim"]["accuracy"]["mcq_single"] == 0.6 and config["resume"] is None
    target = tmp_path / "imported"
    bundle("import", str(zpath), str(target))
    capsys.readouterr()
    assert sorted(p.name for p in target.iterdir()) == [".hydra", "dataset", "manifest.json", "report.html",
                                                       "results.jsonl", "run_config.json", "summary.json"]
    assert (target / "report.html").read_text() == (run / "report.html").read_text()
    original = json.loads((run / "summary.json").read_text())
    assert json.loads((target / "summary.json").read_text()) == original
    imported_manifest = json.loads((target / "manifest.json").read_text())
    assert imported_manifest["imported_from"]["bundle"] == "run.eval752.zip"
    run_manifest = json.loads((run / "manifest.json").read_text())
    snapshot = load_dataset(target / "dataset" / "mmlu_sample")
    assert snapshot.version_hash == run_manifest["dataset"]["version_hash"]
    # re-scoring, as for any other run
    s = run_score([f"input={target / 'results.jsonl'}", f"output_root={tmp_path / 'scores'}"], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rescored = json.loads((Path(last_line(s.stdout)) / "summary.json").read_text())
    assert rescored["metrics"] == original["metrics"] and rescored["by_type"] == original["by_type"]
    assert [r["verdict"] for r in read_rows(Path(last_line(s.stdout)))] == [r["verdict"] for r in read_rows(run)]
    # and its config runs again with the simulated vendor: identical summary
    again = run_cli([f"reproduce={target}", f"output_root={tmp_path / 'again'}", "progress=false",
                     "cache.enabled=false"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    summary = json.loads((Path(last_line(again.stdout)) / "summary.json").read_text())
    for key in ("metrics", "by_type", "by_section", "counts", "failed"):
        assert summary[key] == original[key], key
    assert summary["metrics"]["score"]["value"] == original["metrics"]["score"]["value"]


def test_secrets_are_scrubbed_from_run_configs():
    from eval752.bundle.export import scrub

    config = {"provider": {"api_key_env": "OPENAI_API_KEY", "max_tokens": 64, "api_key": "sk-live",
                           "extra_body": {"access_token": "t", "top_k": 5},
                           "extra_headers": {"Authorization": "Bearer x", "X-Client-Secret": "s", "Accept": "a"}},
              "judge": {"provider": {"api_key": None, "model": "m"}}}
    assert scrub(config) == {"provider": {"api_key_env": "OPENAI_API_KEY", "max_tokens": 64,
                                          "extra_body": {"top_k": 5}, "extra_headers": {"Accept": "a"}},
                             "judge": {"provider": {"api_key": None, "model": "m"}}}
