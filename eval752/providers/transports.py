"""The two ways a request leaves eval752.

``HttpTransport`` speaks the OpenAI Chat Completions protocol directly over one pooled aiohttp session:
it is what OpenAI-compatible servers (vLLM, SGLang, Ollama, the simulated vendor) get, because litellm's
per-call overhead halves the request rate at high concurrency (see benchmarks/runner_throughput.py).
``LiteLLMTransport`` hands the request to ``litellm.acompletion``, which knows every vendor's own API.
Both return a chat-completion dict, or raise ``CallError``.
"""
from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Mapping

from .completion import MalformedCompletion, assemble_stream
from .retry import CallError, parse_retry_after

OPENAI_COMPATIBLE_PREFIXES = ("openai/", "hosted_vllm/", "openai_compatible/")


def bare_model_name(model: str) -> str:
    for prefix in OPENAI_COMPATIBLE_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix):]
    return model


class HttpTransport:
    def __init__(self, base_url: str, model: str, api_key: str | None, *, timeout: float,
                 concurrency: int, stream: bool) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = bare_model_name(model)
        self.timeout = timeout
        self.concurrency = concurrency
        self.stream = stream
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session = None

    async def open(self) -> None:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.concurrency + 4, ttl_dns_cache=300)
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, body: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        import aiohttp

        assert self._session is not None, "transport not opened"
        payload = dict(body, model=self.model)
        if self.stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            async with asyncio.timeout(self.timeout):
                async with self._session.post(self.url, data=data, headers={**self._headers, **headers}) as resp:
                    if resp.status >= 400:
                        text = await resp.text(errors="replace")
                        raise CallError(_error_message(text), status=resp.status,
                                        retry_after=parse_retry_after(resp.headers.get("Retry-After")))
                    if self.stream:
                        return await _read_sse(resp)
                    raw = await resp.read()
        except CallError:
            raise
        except TimeoutError:
            raise CallError(f"timed out after {self.timeout:g}s") from None
        except aiohttp.ClientError as e:
            raise CallError(f"connection error: {type(e).__name__}: {e}") from None
        except MalformedCompletion as e:
            raise CallError(f"malformed stream: {e}") from None
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CallError(f"malformed JSON in response: {e}") from None


async def _read_sse(resp) -> dict[str, Any]:
    chunks: list[dict[str, Any]] = []
    done = False
    buffer = b""
    async for piece in resp.content.iter_any():
        buffer += piece
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                done = True
                break
            try:
                chunks.append(json.loads(data))
            except json.JSONDecodeError as e:
                raise MalformedCompletion(f"bad SSE chunk: {e}") from None
        if done:
            break
    if not done:
        raise MalformedCompletion("stream ended before [DONE]")
    return assemble_stream(chunks)


def _error_message(text: str) -> str:
    try:
        err = json.loads(text).get("error")
        if isinstance(err, Mapping) and err.get("message"):
            return str(err["message"])[:500]
        if isinstance(err, str):
            return err[:500]
    except (ValueError, AttributeError):
        pass
    return text.strip()[:500] or "(empty body)"


def import_litellm():
    """Import litellm quietly and offline: its bundled price map, no telemetry, no log spam."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


class LiteLLMTransport:
    def __init__(self, model: str, api_base: str | None, api_key: str | None, *, timeout: float,
                 stream: bool) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.stream = stream
        self._litellm = None

    async def open(self) -> None:
        self._litellm = await asyncio.to_thread(import_litellm)

    async def close(self) -> None:
        return None

    async def send(self, body: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        litellm = self._litellm
        assert litellm is not None, "transport not opened"
        kwargs = dict(body)
        extra_body = dict(kwargs.pop("extra_body", None) or {})
        if "top_k" in kwargs and self.model.startswith(OPENAI_COMPATIBLE_PREFIXES):
            extra_body["top_k"] = kwargs.pop("top_k")
        if extra_body:
            kwargs["extra_body"] = extra_body
        if headers:
            kwargs["extra_headers"] = dict(headers)
        try:
            resp = await litellm.acompletion(
                model=self.model, api_base=self.api_base, api_key=self.api_key, timeout=self.timeout,
                num_retries=0, stream=self.stream, **kwargs,
            )
            if self.stream:
                chunks = [c.model_dump() async for c in resp]
                return assemble_stream(chunks)
            return resp.model_dump()
        except MalformedCompletion as e:
            raise CallError(f"malformed stream: {e}") from None
        except Exception as e:  # litellm maps every vendor error onto its exception classes
            status = getattr(e, "status_code", None)
            status = status if isinstance(status, int) else None
            retry_after = None
            response = getattr(e, "response", None)
            if response is not None and getattr(response, "headers", None) is not None:
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            message = str(getattr(e, "message", None) or e).replace(self.api_key or "\0", "***")
            raise CallError(f"{type(e).__name__}: {message[:500]}", status=status, retry_after=retry_after) from None
