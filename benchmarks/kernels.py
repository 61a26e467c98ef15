"""Benchmark the batch kernels against the Python checks they replace, measured in the same run.

    python benchmarks/kernels.py [--texts 2000] [--scan-mb 1024] [--quadratic-sample 60]

Prints: first-call compile and cache-load times (fresh subprocesses), kernel times including encoding,
the upstream quadratic check (on a stratified subset, scaled per text to the whole corpus: it would take
minutes in full), the linear Counter-style Python loop (whole corpus), a compiled ``re`` search for
U+0400..U+04FF (whole corpus), agreement checks, ratios, and the throughput and peak memory of
``scan_results_file`` over a generated results file (written to a temp dir, deleted afterwards).

The n-gram check runs at two settings: the defaults n=3, threshold=4, where every ordinary text repeats
within its first few hundred code points so all three checks stop early, and n=12, threshold=4, where
ordinary texts do not repeat and every check reads whole texts (the regime of the upstream check's
~1.2 s per 40,000-character response). Kernels are given ``str`` lists, so their times include encoding.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval752.kernels import encode, has_cyrillic, ngram_repeats, script_counts  # noqa: E402
from eval752.kernels import reference as ref  # noqa: E402
from eval752.kernels.columnar import blocks  # noqa: E402

CYRILLIC_RE = re.compile("[\u0400-\u04FF]")


def make_corpus(count: int, seed: int = 752) -> tuple[list[str], list[str]]:
    """(texts, stratum of each text): ``count`` texts of 4,000 code points, a tenth degenerate, + 20 of 100,000."""
    rng = random.Random(seed)
    onsets, vowels = "bcdfghjklmnprstvwz", "aeiou"
    latin = ["".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 4))) for _ in range(6000)]
    cyr_letters = "бвгджзклмнпрстфхцчшщ"
    cyrillic = ["".join(rng.choice(cyr_letters) + rng.choice("аеиоуыэюя") for _ in range(rng.randint(1, 4)))
                for _ in range(3000)]
    han = [chr(c) for c in rng.sample(range(0x4E00, 0x9FA6), 3000)]
    kana = [chr(c) for c in range(0x3041, 0x3097)]

    def sentence(kind: str) -> str:
        if kind == "latin":
            return " ".join(rng.choice(latin) for _ in range(rng.randint(6, 16))).capitalize() + ". "
        if kind == "cyrillic":
            return " ".join(rng.choice(cyrillic) for _ in range(rng.randint(6, 16))).capitalize() + ". "
        size = rng.randint(15, 40)
        return "".join(rng.choice(han) if rng.random() < 0.7 else rng.choice(kana) for _ in range(size)) + "。"

    def ordinary(length: int) -> str:
        kinds = ["latin", "cjk"] + (["cyrillic"] if rng.random() < 0.3 else [])
        parts, size = [], 0
        while size < length:
            parts.append(sentence(rng.choice(kinds)))
            size += len(parts[-1])
        return "".join(parts)[:length]

    def degenerate(length: int) -> str:
        prefix = ordinary(rng.randint(300, length // 2))
        loop = sentence(rng.choice(["latin", "cjk", "cyrillic"]))[:rng.randint(12, 60)]
        return (prefix + loop * (length // len(loop) + 1))[:length]

    texts, strata = [], []
    for i in range(count):
        bad = i % 10 == 9
        texts.append(degenerate(4000) if bad else ordinary(4000))
        strata.append("degenerate" if bad else "ordinary")
    for i in range(20):
        texts.append(degenerate(100_000) if i in (7, 15) else ordinary(100_000))
        strata.append("long")
    return texts, strata


def timed(fn, repeat: int = 1):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


FIRST_CALL = """
import json, time
t0 = time.perf_counter()
from eval752.kernels import encode, ngram_repeats, ngram_repeat_details, has_cyrillic, script_counts, detect_leaks
t1 = time.perf_counter()
texts = ["abc abc abc abc", "Привет мир", "日本語です"]
ngram_repeats(texts); ngram_repeats(texts, 5, 2); ngram_repeat_details(texts); t2 = time.perf_counter()
has_cyrillic(texts); script_counts(texts); t3 = time.perf_counter()
detect_leaks(texts, "en"); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "ngram": t2 - t1, "scripts": t3 - t2, "leak": t4 - t3, "total": t4 - t0}))
"""


def first_call_times() -> None:
    with tempfile.TemporaryDirectory() as numba_dir, tempfile.TemporaryDirectory() as data_dir:
        env = dict(os.environ, NUMBA_CACHE_DIR=numba_dir, EVAL752_CACHE_DIR=data_dir, PYTHONPATH=str(ROOT))
        for label in ("cold (compile + build script table)", "warm (numba cache + cached table)"):
            run = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, capture_output=True, text=True,
                                 check=True)
            t = json.loads(run.stdout)
            print(f"  first calls, {label}: total {t['total']:.2f} s (import {t['import']:.2f}, ngram kernels "
                  f"{t['ngram']:.2f}, has_cyrillic+script_counts {t['scripts']:.2f}, leak {t['leak']:.2f})")


def compare_ngrams(texts, strata, n, threshold, sample) -> None:
    print(f"\n== ngram_repeats n={n} threshold={threshold} ==")
    t_kernel, flags = timed(lambda: ngram_repeats(texts, n, threshold), repeat=5)
    t_counter, ref_flags = timed(lambda: [ref.ngram_repeats_counter(t, n, threshold) for t in texts])
    assert flags.tolist() == ref_flags, "kernel and Counter-style check disagree"
    rng = random.Random(1)
    estimate, checked = 0.0, 0
    for stratum in ("ordinary", "degenerate", "long"):
        members = [i for i, s in enumerate(strata) if s == stratum]
        size = {"ordinary": sample, "degenerate": max(2, sample // 4), "long": 1}[stratum]
        chosen = rng.sample(members, min(size, len(members)))
        t_sub, quad = timed(lambda: [ref.ngram_repeats_quadratic(texts[i], n, threshold) for i in chosen])
        assert quad == [bool(flags[i]) for i in chosen], "kernel and quadratic check disagree"
        estimate += t_sub / len(chosen) * len(members)
        checked += len(chosen)
    hits = int(flags.sum())
    print(f"  flagged {hits}/{len(texts)} texts; all three agree (quadratic on {checked} texts)")
    print(f"  kernel from str      {t_kernel * 1e3:9.1f} ms")
    print(f"  Counter-style loop   {t_counter * 1e3:9.1f} ms   ratio {t_counter / t_kernel:8.1f}x (target >= 20x)")
    print(f"  quadratic (scaled)   {estimate * 1e3:9.1f} ms   ratio {estimate / t_kernel:8.1f}x (target >= 500x)")


def compare_scripts(texts) -> None:
    print("\n== scripts ==")
    t_re, re_flags = timed(lambda: [CYRILLIC_RE.search(t) is not None for t in texts], repeat=5)
    t_cyr, cyr = timed(lambda: has_cyrillic(texts), repeat=5)
    t_sc, (counts, names) = timed(lambda: script_counts(texts), repeat=5)
    t_all, (all_counts, _) = timed(lambda: script_counts(texts, "all"), repeat=5)
    t_enc, _ = timed(lambda: encode(texts), repeat=5)
    t_blk, _ = timed(lambda: list(blocks(texts)), repeat=5)
    assert cyr.tolist() == re_flags == (counts[:, names.index("Cyrillic")] > 0).tolist()
    assert (counts.sum(axis=1) == all_counts.sum(axis=1)).all()
    print(f"  {sum(re_flags)}/{len(texts)} texts hold Cyrillic; re, has_cyrillic and script_counts agree")
    print(f"  encode alone: encode() {t_enc * 1e3:.1f} ms, blocks() as the kernels do {t_blk * 1e3:.1f} ms")
    print(f"  re.search [\\u0400-\\u04FF]        {t_re * 1e3:8.1f} ms")
    print(f"  has_cyrillic from str            {t_cyr * 1e3:8.1f} ms   {t_re / t_cyr:6.1f}x re")
    print(f"  script_counts (14 cols) from str{t_sc * 1e3:8.1f} ms   {t_re / t_sc:6.1f}x re (target >= 1x)")
    print(f"  script_counts (all {all_counts.shape[1]}) from str{t_all * 1e3:7.1f} ms   {t_re / t_all:6.1f}x re")


SCAN = """
import json, sys, threading, time
from eval752.diagnostics import scan_results_file
from eval752.kernels import ngram_repeats, script_counts, detect_leaks

def rss_mb():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS")) / 1024

ngram_repeats(["warm up"]); script_counts(["warm up"]); detect_leaks(["warm up"], "en")
base, peak, done = rss_mb(), [0.0], threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], rss_mb())
        time.sleep(0.02)
sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
t0 = time.perf_counter()
summary = scan_results_file(sys.argv[1], sys.argv[2])
elapsed = time.perf_counter() - t0
done.set(); sampler.join()
peak[0] = max(peak[0], rss_mb())
print(json.dumps({"seconds": elapsed, "base_mb": base, "peak_mb": peak[0], "rows": summary["rows"],
                  "overall": summary["overall"]}))
"""


def scan_benchmark(texts, megabytes: int) -> None:
    print(f"\n== scan_results_file over a generated {megabytes} MB results.jsonl ==")
    rng = random.Random(5)
    prompts = ["Explain the result in detail.", "日本語で説明してください。", "Объясните результат."]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "results.jsonl", Path(tmp) / "flags.jsonl"
        target, written, row = megabytes << 20, 0, 0
        t0 = time.perf_counter()
        with open(src, "w", encoding="utf-8") as fh:
            while written < target:
                lines = []
                for _ in range(500):
                    text = texts[rng.randrange(len(texts) - 20)]
                    record = {"item_id": f"q{row}", "sample": 0, "section": "main", "type": "freeform",
                              "checker": "exact", "model": f"model-{row % 4}",
                              "request": {"messages": [{"role": "user", "content": prompts[row % 3]}]},
                              "response": {"text": text, "reasoning": text[:800] if row % 2 else None},
                              "verdict": {"score": 1.0, "passed": True}, "status": "ok"}
                    lines.append(json.dumps(record, ensure_ascii=False))
                    row += 1
                chunk = "\n".join(lines) + "\n"
                fh.write(chunk)
                written += len(chunk.encode("utf-8"))
        size = src.stat().st_size
        print(f"  generated {row} rows, {size / 2**20:.0f} MB in {time.perf_counter() - t0:.1f} s")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        run = subprocess.run([sys.executable, "-c", SCAN, str(src), str(out)], env=env, capture_output=True,
                             text=True, check=True)
        r = json.loads(run.stdout)
        print(f"  scanned {r['rows']} rows in {r['seconds']:.1f} s: {size / 2**20 / r['seconds']:.1f} MB/s")
        print(f"  RSS after imports and warm-up {r['base_mb']:.0f} MB, peak during the scan {r['peak_mb']:.0f} MB "
              f"(sampled every 20 ms; file {size / 2**20:.0f} MB)")
        o = r["overall"]
        print(f"  repeat rate {o['repeat_rate']:.3f}, leak rate {o['leak_rate']:.3f}, "
              f"cyrillic rate {o['cyrillic_rate']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000, help="4,000-char texts in the corpus (default 2000)")
    parser.add_argument("--quadratic-sample", type=int, default=60,
                        help="ordinary texts timed with the quadratic check (default 60)")
    parser.add_argument("--scan-mb", type=int, default=1024, help="size of the generated results file (0: skip)")
    args = parser.parse_args()
    import numba

    print(f"numba {numba.__version__}, threads {numba.get_num_threads()}, cpus {os.cpu_count()}, "
          f"load average {os.getloadavg()[0]:.2f} (other processes slow the 2-thread kernels most)")
    first_call_times()
    t0 = time.perf_counter()
    texts, strata = make_corpus(args.texts)
    chars = sum(map(len, texts))
    print(f"\ncorpus: {len(texts)} texts, {chars / 1e6:.1f} M code points, built in {time.perf_counter() - t0:.1f} s")
    ngram_repeats(["warm up"]), script_counts(["warm up"]), has_cyrillic(["warm up"])
    compare_ngrams(texts, strata, 3, 4, args.quadratic_sample)
    compare_ngrams(texts, strata, 12, 4, args.quadratic_sample)
    compare_scripts(texts)
    if args.scan_mb > 0:
        scan_benchmark(texts, args.scan_mb)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
