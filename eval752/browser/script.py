"""The browser-side script: paste it into the chat page's console (or use it as a bookmarklet).

It refuses to run anywhere but the preset's origin. For each prompt of the pack it fills the input, clicks
send, waits for a new response element whose text stays unchanged for ``stable_ms`` (and, when the preset
names one, until the "busy" element is gone), and records the text. At the end it downloads
``<filename>`` (the capture: the pack as given, the target, one response per item) and leaves the capture on
``window.__eval752_capture`` (``window.__eval752_done`` is then true; a refusal sets
``window.__eval752_error``). Presets are starting points: chat sites change their markup, so every selector
can be overridden (flags or a YAML file with ``origin``, ``input``, ``send``, ``response``, ``busy``).
"""
from __future__ import annotations

import json
import urllib.parse
from typing import Any

from ..errors import ConfigError
from .pack import CAPTURE_FORMAT, FORMAT_VERSION

PRESETS: dict[str, dict[str, Any]] = {
    "chatgpt": {"origin": "https://chatgpt.com", "input": "#prompt-textarea",
                "send": 'button[data-testid="send-button"]',
                "response": 'div[data-message-author-role="assistant"]',
                "busy": 'button[data-testid="stop-button"]'},
    "gemini": {"origin": "https://gemini.google.com", "input": 'rich-textarea div[contenteditable="true"]',
               "send": "button.send-button", "response": "message-content", "busy": "button.send-button.stop"},
    "custom": {"origin": None, "input": None, "send": None, "response": None, "busy": None},
}
SELECTOR_KEYS = ("origin", "input", "send", "response", "busy")

TEMPLATE = r"""(() => {
  const CFG = __CFG__;
  const PACK = __PACK__;
  const fail = (msg) => { window.__eval752_error = msg; console.error('eval752: ' + msg); throw new Error('eval752: ' + msg); };
  if (location.origin !== CFG.origin) fail('this script is for ' + CFG.origin + ', not ' + location.origin + '; nothing was sent');
  if (window.__eval752_running) fail('already running on this page');
  window.__eval752_running = true;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const q = (s) => document.querySelector(s);
  const qa = (s) => Array.from(document.querySelectorAll(s));
  const now = () => performance.now();
  async function waitFor(get, what) {
    const t0 = now();
    for (;;) {
      const v = get();
      if (v) return v;
      if (now() - t0 > CFG.timeout_ms) throw new Error('timed out waiting for ' + what);
      await sleep(CFG.poll_ms);
    }
  }
  function fill(el, text) {
    el.focus();
    if (el.isContentEditable) {
      el.textContent = '';
      if (!document.execCommand('insertText', false, text)) el.textContent = text;
      el.dispatchEvent(new InputEvent('input', {bubbles: true}));
      return;
    }
    const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
  }
  async function ask(item) {
    const before = qa(CFG.response).length;
    fill(await waitFor(() => q(CFG.input), 'the input ' + CFG.input), item.prompt);
    const send = await waitFor(() => { const b = q(CFG.send); return b && !b.disabled ? b : null; }, 'the send button ' + CFG.send);
    const t0 = now();
    send.click();
    const el = await waitFor(() => { const all = qa(CFG.response); return all.length > before ? all[all.length - 1] : null; }, 'a response ' + CFG.response);
    let last = null, since = now();
    for (;;) {
      const text = (el.innerText || el.textContent || '').trim();
      if (text !== last) { last = text; since = now(); }
      else if (text && now() - since >= CFG.stable_ms && !(CFG.busy && q(CFG.busy))) break;
      if (now() - t0 > CFG.timeout_ms) throw new Error('no stable answer within ' + CFG.timeout_ms + ' ms');
      await sleep(CFG.poll_ms);
    }
    return {text: last, latency_ms: Math.max(0, Math.round(now() - t0 - CFG.stable_ms))};
  }
  (async () => {
    const capture = {format: CFG.capture_format, format_version: CFG.format_version, pack: PACK,
      target: {preset: CFG.preset, origin: CFG.origin, user_agent: navigator.userAgent},
      started: new Date().toISOString(), ended: null, responses: []};
    window.__eval752_capture = capture;
    for (const item of PACK.items) {
      try {
        const r = await ask(item);
        capture.responses.push({id: item.id, text: r.text, latency_ms: r.latency_ms, error: null});
      } catch (e) {
        capture.responses.push({id: item.id, text: '', latency_ms: null, error: String((e && e.message) || e)});
      }
      console.log('eval752: ' + capture.responses.length + '/' + PACK.items.length + ' ' + item.id);
      await sleep(CFG.between_ms);
    }
    capture.ended = new Date().toISOString();
    const blob = new Blob([JSON.stringify(capture, null, 1)], {type: 'application/json'});
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = CFG.filename;
    document.body.appendChild(a);
    a.click();
    a.remove();
    window.__eval752_done = true;
  })();
})();
"""


def resolve_target(preset: str, overrides: dict[str, Any]) -> dict[str, Any]:
    if preset not in PRESETS:
        from ..registry import unknown_name_message

        raise ConfigError(unknown_name_message("preset", preset, sorted(PRESETS)))
    target = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None and k in SELECTOR_KEYS}}
    missing = [k for k in ("origin", "input", "send", "response") if not target.get(k)]
    if missing:
        raise ConfigError(f"preset {preset!r} needs {', '.join('--' + k for k in missing)}")
    parsed = urllib.parse.urlsplit(str(target["origin"]))
    if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.path not in ("", "/"):
        raise ConfigError(f"origin must look like https://host[:port], got {target['origin']!r}")
    target["origin"] = f"{parsed.scheme}://{parsed.netloc}"
    return {"preset": preset, **target}


def make_script(pack: dict[str, Any], target: dict[str, Any], *, stable_ms: int = 1500, timeout_ms: int = 180_000,
                poll_ms: int = 100, between_ms: int = 500, filename: str = "eval752-capture.json") -> str:
    cfg = {**target, "stable_ms": stable_ms, "timeout_ms": timeout_ms, "poll_ms": poll_ms, "between_ms": between_ms,
           "filename": filename, "capture_format": CAPTURE_FORMAT, "format_version": FORMAT_VERSION}
    # JSON is valid JS; "</" is escaped so the script can also sit inside an HTML page.
    def js(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")

    return TEMPLATE.replace("__CFG__", js(cfg)).replace("__PACK__", js(pack))


def bookmarklet(script: str) -> str:
    return "javascript:" + urllib.parse.quote(script, safe="")
