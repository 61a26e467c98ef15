"""Reading a finished (or partial) run directory into what the reports need: its summary, manifest and one
flat record per (item, sample), for eval752 runs and vendor-verifier runs alike."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TEXT_LIMIT = 4000  # characters of prompt / response kept per item in an HTML report


@dataclass
class RunData:
    path: Path
    summary: dict[str, Any]
    manifest: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "eval"  # eval | verifier

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def dataset_hash(self) -> str | None:
        return (self.manifest.get("dataset") or {}).get("version_hash")

    def scores(self) -> dict[tuple[str, int], float]:
        """(item, sample) -> score, failures counted as 0 (the ``score`` metric's convention)."""
        return {(r["id"], r["sample"]): float(r["score"] or 0.0) for r in self.records}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a partial last line of a killed run
    return out


def _cut(text: Any) -> str:
    s = "" if text is None else (text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
    return s if len(s) <= TEXT_LIMIT else s[:TEXT_LIMIT] + f"... [{len(s) - TEXT_LIMIT} more characters]"


def _prompt(messages: Any) -> str:
    parts = []
    for m in messages or []:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "[" + str(p.get("type")) + "]") for p in content if isinstance(p, dict))
        parts.append(f"[{m.get('role', '?')}] {content or ''}")
    return "\n".join(parts)


def eval_record(row: dict[str, Any]) -> dict[str, Any]:
    resp = row.get("response") or {}
    verdict = row.get("verdict") or {}
    ok = row.get("status") == "ok"
    return {
        "id": str(row.get("item_id")), "sample": int(row.get("sample") or 0),
        "section": row.get("section") or "", "type": row.get("type") or "",
        "status": row.get("status"), "checker": row.get("checker") or "",
        "score": float(verdict.get("score", 0.0)) if ok and verdict else 0.0,
        "verdict": ("error" if not ok else "pass" if verdict.get("passed") else
                    "no answer" if verdict.get("answered") is False else "fail"),
        "reason": _cut(verdict.get("reason") or resp.get("error") or ""),
        "extracted": _cut(verdict.get("extracted")),
        "prompt": _cut(_prompt((row.get("request") or {}).get("messages"))),
        "response": _cut(resp.get("text")), "reasoning": _cut(resp.get("reasoning")),
        "tool_calls": _cut(resp.get("tool_calls") or ""),
        "latency_s": resp.get("latency_s") if not resp.get("cached") else None,
        "prompt_tokens": resp.get("prompt_tokens"), "completion_tokens": resp.get("completion_tokens"),
    }


def verifier_record(row: dict[str, Any]) -> dict[str, Any]:
    body = row.get("response") or {}
    msg = ((body.get("choices") or [{}])[0] or {}).get("message") or {}
    checks = {k: v for k, v in row.items() if k.endswith("_valid") or k in ("error_only_reasoning",
                                                                          "tool_calls_reason")}
    failed = (row.get("status") != "success" or any(v is False for k, v in checks.items() if k.endswith("_valid"))
              or bool(row.get("error_only_reasoning")))
    usage = body.get("usage") or {}
    return {
        "id": str(row.get("data_index")), "sample": int(row.get("loop") or 1) - 1,
        "section": f"loop {row.get('loop')}", "type": "verifier", "status": row.get("status"),
        "checker": "verifier", "score": 0.0 if failed else 1.0,
        "verdict": "error" if row.get("status") != "success" else ("fail" if failed else "pass"),
        "reason": _cut(json.dumps(checks, ensure_ascii=False)),
        "extracted": "", "prompt": _cut(_prompt((row.get("request") or {}).get("messages"))),
        "response": _cut(msg.get("content")),
        "reasoning": _cut(msg.get("reasoning_content") or msg.get("reasoning")),
        "tool_calls": _cut(msg.get("tool_calls") or ""), "latency_s": row.get("latency_s"),
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
    }


def load_run(path: Path | str) -> RunData:
    path = Path(path)
    summary = _read_json(path / "summary.json")
    manifest = _read_json(path / "manifest.json")
    loops = sorted(path.glob("loop_*/results.jsonl"))
    if loops:
        records = [verifier_record(r) for f in loops for r in _rows(f)]
        return RunData(path, summary, manifest, records, kind="verifier")
    return RunData(path, summary, manifest, [eval_record(r) for r in _rows(path / "results.jsonl")])


def expand_dirs(paths: list[str | Path]) -> list[Path]:
    """Run directories from run or sweep directories (a sweep's runs in ``sweep.json`` order)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "summary.json").is_file() or (p / "manifest.json").is_file():
            out.append(p)
        elif (p / "sweep.json").is_file():
            runs = _read_json(p / "sweep.json").get("runs") or []
            out += [p / r["name"] for r in runs if (p / r["name"] / "summary.json").is_file()]
        elif p.is_dir():
            out += sorted(q.parent for q in p.glob("*/summary.json"))
    seen: set[Path] = set()
    return [p for p in out if not (p.resolve() in seen or seen.add(p.resolve()))]
