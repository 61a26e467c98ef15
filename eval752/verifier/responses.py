"""Reading chat-completion objects (as recorded by upstream) and writing eval752 ``Response``s as them."""
from __future__ import annotations

from typing import Any, Mapping

from ..types import Response


def first_choice(response: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not response or not isinstance(response.get("choices"), list):
        return None
    choices = response["choices"]
    return choices[0] if choices and isinstance(choices[0], Mapping) else {}


def response_message(response: Mapping[str, Any] | None) -> Mapping[str, Any]:
    choice = first_choice(response)
    msg = choice.get("message") if choice else None
    return msg if isinstance(msg, Mapping) else {}


def response_content(response: Mapping[str, Any] | None) -> str | None:
    """``choices[0].message.content``; a list of content parts is joined from its text parts."""
    content = response_message(response).get("content")
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
        return "".join(parts)
    return content if isinstance(content, str) else None


def finish_reason_of(row: Mapping[str, Any]) -> str | None:
    """The finish reason of a result row: from its response, else the row's own (trimmed baselines)."""
    choice = first_choice(row.get("response"))
    if choice is not None and choice.get("finish_reason") is not None:
        return str(choice["finish_reason"])
    for key in ("finish_reason", "tool_calls_finish_reason"):
        if row.get(key) is not None:
            return str(row[key])
    return None


def response_to_chat_completion(response: Response) -> tuple[str, dict[str, Any]]:
    """(status, body) for an eval752 ``Response``: a chat-completion object, or ``{"error": ...}`` with
    status ``"failed"``. Reasoning goes to ``message.reasoning`` (the field upstream reads)."""
    if not response.ok:
        return "failed", {"error": response.error}
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.reasoning is not None:
        message["reasoning"] = response.reasoning
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
    body: dict[str, Any] = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": response.finish_reason}],
    }
    if response.prompt_tokens is not None or response.completion_tokens is not None:
        body["usage"] = {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens}
    return "success", body
