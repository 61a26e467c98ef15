"""Hostile ``.eval752.zip`` bundles: each refused with its own message, exit status 2, and nothing written
outside the target folder (the target itself is not created either)."""
from __future__ import annotations

import hashlib
import json
import struct
import warnings
import zipfile
from pathlib import Path

import pytest

from eval752.bundle.cli import main as bundle_main
from eval752.bundle.export import dataset_entries, finish_bundle, json_bytes
from eval752.datasets import make_dataset
from eval752.types import Item

ITEMS = [Item(id=f"q{i}", type="freeform", text=f"What is {i} + {i}?", section="s", answer=str(2 * i))
         for i in range(1, 3)]


def good_entries() -> dict[str, bytes]:
    entries, sections = dataset_entries(make_dataset("tiny", None, ITEMS), "two sums")
    return finish_bundle(entries, "dataset", sections, "1980-01-01T00:00:00Z")


def write_raw(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    """Entries (name, data, unix mode) written in the given order, duplicates and all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w") as zf:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = mode << 16
                zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def bundle_from(tmp_path: Path, entries: dict[str, bytes], extra: list[tuple[str, bytes, int]] = ()) -> Path:
    rows = [(name, data, 0o100644) for name, data in sorted(entries.items())] + list(extra)
    return write_raw(tmp_path / "src" / "evil.eval752.zip", rows)


def relist(entries: dict[str, bytes], **manifest_changes) -> dict[str, bytes]:
    """Rebuild manifest.json so that every hash matches, then apply changes to it."""
    manifest = json.loads(entries["manifest.json"])
    manifest["entries"] = {n: {"sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
                           for n, d in sorted(entries.items()) if n != "manifest.json"}
    manifest.update(manifest_changes)
    return {**entries, "manifest.json": json_bytes(manifest)}


def lie_about_size(path: Path, name: str, size: int) -> None:
    """Patch the uncompressed size of ``name`` in its local header and central directory entry."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    local = data.find(b"PK\x03\x04")
    while local != -1:
        nlen = struct.unpack("<H", data[local + 26:local + 28])[0]
        if data[local + 30:local + 30 + nlen] == encoded:
            data[local + 22:local + 26] = struct.pack("<I", size)
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        nlen = struct.unpack("<H", data[central + 28:central + 30])[0]
        if data[central + 46:central + 46 + nlen] == encoded:
            data[central + 24:central + 28] = struct.pack("<I", size)
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def refused(tmp_path: Path, bundle: Path, capsys, *flags: str) -> str:
    dest = tmp_path / "dest"
    dest.mkdir(exist_ok=True)
    with pytest.raises(SystemExit) as exc:
        bundle_main(["import", str(bundle), str(dest / "imported"), *flags])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("eval752-bundle: error: ") and "Traceback" not in err
    assert list(dest.iterdir()) == []  # no target, no temporary folder left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "src"]
    return err.removeprefix("eval752-bundle: error: ").strip()


@pytest.fixture(autouse=True)
def _src(tmp_path):
    (tmp_path / "src").mkdir()


def test_good_bundle_imports(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries())
    (tmp_path / "dest").mkdir()
    bundle_main(["import", str(bundle), str(tmp_path / "dest" / "ok")])
    assert sorted(p.name for p in (tmp_path / "dest" / "ok").iterdir()) == ["meta.json", "sections"]


def test_dotdot_path(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("../evil.txt", b"x", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry '../evil.txt' climbs out of the bundle with '..'"
    assert not (tmp_path / "evil.txt").exists()


def test_absolute_path(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("/tmp/evil.txt", b"x", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry '/tmp/evil.txt' has an absolute path"


def test_backslash_path(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("assets\\..\\..\\evil.txt", b"x", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry 'assets\\\\..\\\\..\\\\evil.txt' has a backslash in its path"


def test_drive_letter(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("C:evil.txt", b"x", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry 'C:evil.txt' has a drive letter"


def test_symlink(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("assets/link", b"/etc/passwd", 0o120777)])
    assert refused(tmp_path, bundle, capsys) == "entry 'assets/link' is a symbolic link"


def test_non_regular_file(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("assets/pipe", b"", 0o010644)])
    assert refused(tmp_path, bundle, capsys) == "entry 'assets/pipe' is not a regular file (mode 0o10000)"


def test_duplicate_names(tmp_path, capsys):
    entries = good_entries()
    bundle = bundle_from(tmp_path, entries, [("meta.json", entries["meta.json"], 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry 'meta.json' appears twice in the bundle"


def test_names_differing_only_in_case(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("META.json", b"{}", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entries 'meta.json' and 'META.json' differ only in case"


def test_zip_bomb_with_lying_header(tmp_path, capsys):
    entries = relist({**good_entries(), "assets/zeros.bin": b"\0" * 2_000_000})
    bundle = bundle_from(tmp_path, entries)
    lie_about_size(bundle, "assets/zeros.bin", 10)
    assert refused(tmp_path, bundle, capsys, "--max-entry-bytes", "100000") == (
        "entry 'assets/zeros.bin' decompresses to more than 100000 bytes (--max-entry-bytes); its header claimed 10")


def test_too_many_entries(tmp_path, capsys):
    extra = [(f"assets/f{i}.txt", b"x", 0o100644) for i in range(3)]
    bundle = bundle_from(tmp_path, good_entries(), extra)
    assert refused(tmp_path, bundle, capsys, "--max-entries", "5") == (
        "bundle has 6 entries; the limit is 5 (--max-entries)")


def test_total_size_limit(tmp_path, capsys):
    entries = good_entries()
    total = sum(len(d) for d in entries.values())
    bundle = bundle_from(tmp_path, entries)
    assert refused(tmp_path, bundle, capsys, "--max-total-bytes", str(total - 1)) == (
        f"bundle declares {total} bytes in all; the limit is {total - 1} (--max-total-bytes)")


def test_total_size_past_the_limit_with_lying_headers(tmp_path, capsys):
    entries = relist({**good_entries(), "assets/a.bin": b"\0" * 60_000, "assets/b.bin": b"\0" * 60_000})
    bundle = bundle_from(tmp_path, entries)
    lie_about_size(bundle, "assets/b.bin", 1)  # a.bin is honest; b.bin claims one byte
    assert refused(tmp_path, bundle, capsys, "--max-total-bytes", "100000") == (
        "bundle decompresses to more than 100000 bytes in all (--max-total-bytes)")


def test_invalid_utf8_in_a_section(tmp_path, capsys):
    entries = good_entries()
    entries = relist({**entries, "sections/s.jsonl": entries["sections/s.jsonl"] + b'{"id": "\xff"}\n'})
    entries = relist(entries, sections=[{"name": "s", "file": "sections/s.jsonl", "items": 3}])
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "the bundle's items are invalid: dataset has 1 problem:\n"
        "sections/s.jsonl:3: -: invalid UTF-8: byte 0xff at byte offset 164 of the file")


def test_invalid_json_in_a_section(tmp_path, capsys):
    entries = good_entries()
    entries = relist({**entries, "sections/s.jsonl": entries["sections/s.jsonl"] + b"{not json\n"})
    entries = relist(entries, sections=[{"name": "s", "file": "sections/s.jsonl", "items": 3}])
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "the bundle's items are invalid: dataset has 1 problem:\n"
        "sections/s.jsonl:3: -: invalid JSON: Expecting property name enclosed in double quotes (column 2)")


def test_manifest_counts_disagree(tmp_path, capsys):
    entries = relist(good_entries(), sections=[{"name": "s", "file": "sections/s.jsonl", "items": 5}])
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "manifest says section 's' has 5 items; sections/s.jsonl has 2")


def test_manifest_hash_disagrees(tmp_path, capsys):
    entries = good_entries()
    altered = entries["sections/s.jsonl"].replace(b'"answer":"2"', b'"answer":"3"')
    digest = hashlib.sha256(altered).hexdigest()
    bundle = bundle_from(tmp_path, {**entries, "sections/s.jsonl": altered})
    assert refused(tmp_path, bundle, capsys) == (
        f"entry 'sections/s.jsonl': sha256 {digest[:12]}... does not match the manifest")


def test_meta_version_hash_disagrees(tmp_path, capsys):
    entries = good_entries()
    meta = json.loads(entries["meta.json"])
    real = meta["version_hash"]
    meta["version_hash"] = "0" * 64
    entries = relist({**entries, "meta.json": json_bytes(meta)})
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        f"meta.json version_hash 000000000000... does not match the dataset's content ({real[:12]}...)")


def test_missing_manifest(tmp_path, capsys):
    entries = {k: v for k, v in good_entries().items() if k != "manifest.json"}
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "bundle has no manifest.json (is this an eval752 bundle?)")


def test_missing_meta(tmp_path, capsys):
    entries = {k: v for k, v in good_entries().items() if k != "meta.json"}
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == "bundle has no meta.json"


def test_unknown_format_version(tmp_path, capsys):
    entries = relist(good_entries(), format_version=99)
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "unknown bundle format version 99; this eval752 reads version 1")


def test_section_that_is_not_jsonl(tmp_path, capsys):
    entries = good_entries()
    entries = relist({**entries, "sections/notes.txt": b"hello\n"})
    assert refused(tmp_path, bundle_from(tmp_path, entries), capsys) == (
        "section file 'sections/notes.txt' is not a .jsonl file")


def test_entry_not_in_the_manifest(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("assets/stowaway.bin", b"x", 0o100644)])
    assert refused(tmp_path, bundle, capsys) == "entry 'assets/stowaway.bin' is not listed in the manifest"


def test_unexpected_top_level_entry(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("run.sh", b"rm -rf /", 0o100755)])
    assert refused(tmp_path, bundle, capsys) == (
        "unexpected entry 'run.sh'; a bundle holds manifest.json, meta.json, run_config.json, run_manifest.json, "
        "results.jsonl, summary.json and the folders sections/, assets/, checkers/")


def test_not_a_zip(tmp_path, capsys):
    bundle = tmp_path / "src" / "evil.eval752.zip"
    bundle.write_bytes(b"this is not a zip")
    assert refused(tmp_path, bundle, capsys) == f"{bundle}: not a zip archive (File is not a zip file)"


def test_verify_and_inspect_refuse_too(tmp_path, capsys):
    bundle = bundle_from(tmp_path, good_entries(), [("../evil.txt", b"x", 0o100644)])
    for command in ("verify", "inspect"):
        with pytest.raises(SystemExit) as exc:
            bundle_main([command, str(bundle)])
        assert exc.value.code == 2
        assert capsys.readouterr().err == (
            "eval752-bundle: error: entry '../evil.txt' climbs out of the bundle with '..'\n")
