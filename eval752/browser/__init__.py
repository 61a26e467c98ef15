"""Browser harness: evaluate a chat web page (no API) with eval752's datasets and checkers.

``pack`` makes a signed, prompt-only pack; ``script`` the JavaScript that types the prompts into the page
and captures the answers; ``capture`` imports the result as a completed, scored run directory; ``cdp``
drives a local headless Chromium (for tests and unattended runs).
"""
from .pack import TokenError, make_pack, verify_pack
from .script import PRESETS, make_script, resolve_target

__all__ = ["PRESETS", "TokenError", "make_pack", "make_script", "resolve_target", "verify_pack"]
