"""The answer key: what the simulated vendor knows about each item, and how a request finds its item."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

_PREFIX = 12  # characters of an entry's text used to index it for substring search
_CACHE_MAX = 200_000


def _entry_from_json(d: dict[str, Any]) -> dict[str, Any]:
    """Accept an answer-key line ({id, type, text, ...}) or a native dataset item ({..., inputs: {text}})."""
    if "id" not in d:
        raise ValueError("an answer-key entry needs an 'id'")
    text = d.get("text")
    if text is None and isinstance(d.get("inputs"), dict):
        text = d["inputs"].get("text")
    entry: dict[str, Any] = {
        "id": str(d["id"]),
        "type": d.get("type") or "freeform",
        "text": text or "",
        "choices": list(d["choices"]) if d.get("choices") is not None else None,
        "answer": d.get("answer"),
    }
    meta = d.get("meta") if isinstance(d.get("meta"), dict) else {}
    for extra in ("tool", "arguments"):
        if extra in d:
            entry[extra] = d[extra]
        elif extra in meta:
            entry[extra] = meta[extra]
    return entry


class AnswerKey:
    """Entries keyed by item id: ``{id, type, text, choices, answer}`` (optionally ``tool`` and
    ``arguments`` for tool-calling items).

    ``lookup`` finds an entry by id, else by the prompt: first an entry whose whole ``text`` equals the
    (stripped) prompt, then the longest entry ``text`` that occurs inside it. Substring search is indexed
    by each text's first 12 characters, so it costs O(len(prompt)) and not O(entries); results are cached.
    """

    def __init__(self, entries: Iterable[dict[str, Any]] = ()) -> None:
        self._by_id: dict[str, dict[str, Any]] = {}
        for e in entries:
            entry = _entry_from_json(dict(e))
            self._by_id[entry["id"]] = entry
        self._reindex()

    def _reindex(self) -> None:
        self._by_text: dict[str, dict[str, Any]] = {}
        self._by_prefix: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self._short: list[tuple[str, dict[str, Any]]] = []
        self._cache: dict[str, dict[str, Any] | None] = {}
        for entry in self._by_id.values():
            text = entry["text"].strip()
            if not text:
                continue
            self._by_text.setdefault(text, entry)
            if len(text) >= _PREFIX:
                self._by_prefix.setdefault(text[:_PREFIX], []).append((text, entry))
            else:
                self._short.append((text, entry))
        for bucket in self._by_prefix.values():
            bucket.sort(key=lambda pair: -len(pair[0]))
        self._short.sort(key=lambda pair: -len(pair[0]))

    # -- construction and files ------------------------------------------------------------------
    @classmethod
    def from_items(cls, items: Iterable[Any]) -> "AnswerKey":
        """From ``eval752.types.Item`` objects (or anything with their attributes)."""
        entries = []
        for it in items:
            d: dict[str, Any] = {"id": it.id, "type": it.type, "text": it.text,
                                 "choices": list(it.choices) if it.choices is not None else None,
                                 "answer": list(it.answer) if isinstance(it.answer, tuple) else it.answer}
            meta = dict(getattr(it, "meta", None) or {})
            if meta:
                d["meta"] = meta
            entries.append(d)
        return cls(entries)

    def save(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            for entry in self._by_id.values():
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "AnswerKey":
        """Read an answer key, or a native dataset ``.jsonl`` (``inputs.text`` is taken as the text)."""
        entries = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{n}: not JSON: {e}") from None
        return cls(entries)

    # -- queries ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._by_id

    def get(self, item_id: str) -> dict[str, Any] | None:
        return self._by_id.get(item_id)

    def entries(self) -> list[dict[str, Any]]:
        return list(self._by_id.values())

    def lookup(self, item_id: str | None, prompt_text: str) -> dict[str, Any] | None:
        if item_id is not None:
            entry = self._by_id.get(item_id)
            if entry is not None:
                return entry
        if not prompt_text or not self._by_id:
            return None
        cache = self._cache
        if prompt_text in cache:
            return cache[prompt_text]
        found = self._search(prompt_text)
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[prompt_text] = found
        return found

    def _search(self, prompt: str) -> dict[str, Any] | None:
        stripped = prompt.strip()
        exact = self._by_text.get(stripped)
        if exact is not None:
            return exact
        best: dict[str, Any] | None = None
        best_len = 0
        by_prefix = self._by_prefix
        if by_prefix:
            for i in range(len(stripped) - _PREFIX + 1):
                bucket = by_prefix.get(stripped[i:i + _PREFIX])
                if bucket is None:
                    continue
                for text, entry in bucket:  # longest first
                    if len(text) <= best_len:
                        break
                    if stripped.startswith(text, i):
                        best, best_len = entry, len(text)
                        break
        if best is None:
            for text, entry in self._short:  # longest first
                if text in stripped:
                    return entry
        return best
