"""Prompt packs for the browser harness, and the HMAC token that ties a capture back to its pack.

A pack holds what a chat page needs and nothing more: the dataset's identity (name, version hash, the
sections and item limit chosen) and, per item, its id, section and the prompt text eval752 would send
(MCQ templates applied). No answers, no checkers, no assets. ``token`` is HMAC-SHA256 over the canonical
JSON of the pack without its token, keyed with a local secret: ``$EVAL752_BROWSER_SECRET`` if set, else the
file ``~/.config/eval752/browser_secret`` (created with 32 random bytes, mode 0600, on first use). The
secret itself is never written into a pack, a script or a capture.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..config import DatasetConfig
from ..errors import ConfigError, Eval752Error
from ..prompts import build_messages
from ..types import canonical_json

PACK_FORMAT = "eval752.browser-pack"
CAPTURE_FORMAT = "eval752.browser-capture"
FORMAT_VERSION = 1
SECRET_ENV = "EVAL752_BROWSER_SECRET"


class TokenError(Eval752Error):
    """A pack or capture does not carry a valid token for this machine's secret."""


def secret_file() -> Path:
    return Path.home() / ".config" / "eval752" / "browser_secret"


def load_secret() -> bytes:
    value = os.environ.get(SECRET_ENV)
    if value:
        return value.encode("utf-8")
    path = secret_file()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return path.read_text(encoding="utf-8").strip().encode("utf-8")


def sign(body: dict[str, Any], secret: bytes | None = None) -> str:
    key = secret if secret is not None else load_secret()
    return hmac.new(key, canonical_json(body).encode("utf-8"), hashlib.sha256).hexdigest()


def verify_pack(pack: Any, what: str = "pack") -> dict[str, Any]:
    """The pack if its token verifies; TokenError otherwise."""
    if not isinstance(pack, dict) or pack.get("format") != PACK_FORMAT:
        raise TokenError(f"the {what} is not an eval752 browser pack")
    if pack.get("format_version") != FORMAT_VERSION:
        raise TokenError(f"unknown browser pack format version {pack.get('format_version')!r}")
    token = pack.get("token")
    body = {k: v for k, v in pack.items() if k != "token"}
    if not isinstance(token, str) or not hmac.compare_digest(token, sign(body)):
        raise TokenError(f"the {what}'s token does not verify: it was changed after it was made, or made with "
                         f"another secret (${SECRET_ENV} or {secret_file()})")
    return pack


def prompt_for(item, cfg: DatasetConfig) -> str:
    messages = build_messages(item, cfg, None)
    return "\n\n".join(str(m["content"]) for m in messages)


def make_pack(dataset_path: str, *, sections: list[str] | None = None, max_items: int | None = None,
              fmt: str = "auto", system_prompt: str | None = None) -> dict[str, Any]:
    from ..datasets import load_any

    dataset, _ = load_any(dataset_path, format=fmt, sections=sections, limit=max_items)
    with_images = dataset.items_needing_vision()
    if with_images:
        raise ConfigError(f"{len(with_images)} selected items have images ({', '.join(with_images[:5])}); a browser "
                          "pack carries prompts only, no assets: choose other sections")
    cfg = DatasetConfig(name=dataset.name, path=str(dataset_path), format=fmt, sections=sections,
                        limit=max_items, system_prompt=system_prompt)
    body = {
        "format": PACK_FORMAT,
        "format_version": FORMAT_VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "nonce": secrets.token_hex(8),
        "dataset": {"name": dataset.name, "version_hash": dataset.version_hash, "format": fmt,
                    "sections": list(sections) if sections else None, "limit": max_items,
                    "system_prompt": system_prompt, "items": len(dataset.items)},
        "items": [{"id": item.id, "section": item.section, "prompt": prompt_for(item, cfg)}
                  for item in dataset.items],
    }
    return {**body, "token": sign(body)}
