"""Items become chat messages: MCQ choices are lettered, images become image parts."""
from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any, Callable

from .config import DatasetConfig
from .types import Item

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def lettered(choices: tuple[str, ...]) -> str:
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))


def prompt_text(item: Item, cfg: DatasetConfig) -> str:
    if item.type == "mcq_single" and item.choices:
        return cfg.mcq_template.format(question=item.text, choices=lettered(item.choices))
    if item.type == "mcq_multi" and item.choices:
        return cfg.mcq_multi_template.format(question=item.text, choices=lettered(item.choices))
    return item.text


def image_part(path: Path) -> dict[str, Any]:
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


def build_messages(item: Item, cfg: DatasetConfig,
                   asset_path: Callable[[str], Path] | None = None) -> tuple[dict[str, Any], ...]:
    recorded = item.meta.get("messages") if isinstance(item.meta, dict) else None
    if _is_chat(recorded) and not item.images:
        # Imported chat and conversation rows carry their whole prompt: earlier turns are context.
        turns = [{"role": m["role"], "content": m["content"]} for m in recorded]
        if cfg.system_prompt and turns[0]["role"] != "system":
            turns.insert(0, {"role": "system", "content": cfg.system_prompt})
        return tuple(turns)
    text = prompt_text(item, cfg)
    messages: list[dict[str, Any]] = []
    if cfg.system_prompt:
        messages.append({"role": "system", "content": cfg.system_prompt})
    if item.images and asset_path is not None:
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
        parts += [image_part(asset_path(rel)) for rel in item.images]
        messages.append({"role": "user", "content": parts})
    else:
        messages.append({"role": "user", "content": text})
    return tuple(messages)


def _is_chat(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) and "content" in m for m in value)
            and value[-1]["role"] == "user")
