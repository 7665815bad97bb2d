"""Checks that the official `openai` and `anthropic` Python packages parse every reply of the
scripted LLM server: Chat Completions, Responses and Anthropic Messages, JSON and SSE.

Each reply is read twice: through the SDK as an application would (high-level objects, stream
helpers that accumulate a final message), and as raw JSON validated strictly against the SDK's
pydantic models (the SDKs themselves build models without validation). Run by
`tests/python_sdks.rs` with BASE (server root URL); the request order matches its script.
Prints one `ok <check>` line per check and exits non-zero on the first failure.
"""

import json
import os
import sys

import anthropic
import urllib.request
import openai
from pydantic import TypeAdapter
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

BASE = os.environ["BASE"]
TOOLS_CHAT = [{"type": "function", "function": {"name": "terminal", "description": "run",
               "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
TOOLS_RESP = [{"type": "function", "name": "terminal", "description": "run",
               "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]
TOOLS_ANTH = [{"name": "terminal", "description": "run",
               "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def ok(name):
    print("ok", name, flush=True)


def sse_data(text):
    """(event, data) of each SSE event in a raw body."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data:
            out.append((name, "\n".join(data)))
    return out


oa = openai.OpenAI(base_url=BASE + "/v1", api_key="sk-test", max_retries=0)
an = anthropic.Anthropic(base_url=BASE, api_key="sk-ant-test", max_retries=0)


def post_raw(path, body):
    """The raw text of a POST answered with 200."""
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()

# 1. Chat, JSON: text, reasoning and a tool call.
raw = oa.chat.completions.with_raw_response.create(
    model="gpt-x", messages=[{"role": "user", "content": "hi"}], tools=TOOLS_CHAT)
completion = raw.parse()
ChatCompletion.model_validate(json.loads(raw.http_response.text))
assert completion.choices[0].message.tool_calls[0].function.name == "terminal"
assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments) == {"command": "ls"}
assert completion.usage.prompt_tokens == 11
ok("chat json")

# 2. Chat, SSE.
text, calls, usage = "", {}, None
with oa.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}],
                                tools=TOOLS_CHAT, stream=True,
                                stream_options={"include_usage": True}) as stream:
    for chunk in stream:
        ChatCompletionChunk.model_validate(chunk.model_dump())
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                calls.setdefault(call.index, "")
                calls[call.index] += call.function.arguments or ""
assert text == "Streaming chat text that is long enough to be split.", text
assert json.loads(calls[0]) == {"command": "pwd"}
assert usage is not None
ok("chat stream")

# 3. Responses, JSON: reasoning item (encrypted), message, function call.
raw = oa.responses.with_raw_response.create(
    model="gpt-5", input="hi", tools=TOOLS_RESP, include=["reasoning.encrypted_content"],
    store=False, reasoning={"effort": "high", "summary": "auto"})
response = raw.parse()
Response.model_validate(json.loads(raw.http_response.text))
kinds = [item.type for item in response.output]
assert kinds == ["reasoning", "message", "function_call"], kinds
assert response.output[0].encrypted_content
assert response.output_text == "Responses text."
assert response.output[2].call_id == "call_r1"
assert response.usage.input_tokens_details.cached_tokens == 7
assert response.usage.output_tokens_details.reasoning_tokens == 3
ok("responses json")

# 4. Responses, SSE through the SDK's stream helper (accumulates a final response).
with oa.responses.stream(model="gpt-5", input="hi", tools=TOOLS_RESP,
                         include=["reasoning.encrypted_content"], store=False) as stream:
    deltas = ""
    for event in stream:
        if event.type == "response.output_text.delta":
            deltas += event.delta
    final = stream.get_final_response()
assert deltas == "Streamed responses text, in pieces.", deltas
assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]
assert json.loads(final.output[2].arguments) == {"command": "ls -la"}
ok("responses stream")

# 5. Responses SSE again, raw, each event validated strictly.
body = post_raw("/v1/responses", {"model": "gpt-5", "input": "hi", "stream": True,
                                                "tools": TOOLS_RESP})
adapter = TypeAdapter(ResponseStreamEvent)
events = sse_data(body)
for name, data in events:
    event = adapter.validate_python(json.loads(data))
    assert event.type == name, (event.type, name)
assert events[-1][0] == "response.completed"
ok("responses stream strict")

# 6. Anthropic, JSON: thinking with signature, text, tool_use, cache usage.
raw = an.messages.with_raw_response.create(
    model="claude-sonnet-4-5", max_tokens=2048, messages=[{"role": "user", "content": "hi"}],
    tools=TOOLS_ANTH, thinking={"type": "enabled", "budget_tokens": 1024})
message = raw.parse()
Message.model_validate(json.loads(raw.http_response.text))
assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
assert message.content[0].signature == "sig-json"
assert message.content[2].input == {"command": "ls"}
assert message.stop_reason == "tool_use"
assert message.usage.cache_read_input_tokens == 5 and message.usage.cache_creation_input_tokens == 9
ok("messages json")

# 7. Anthropic, SSE through the SDK's stream helper.
with an.messages.stream(model="claude-sonnet-4-5", max_tokens=2048,
                        messages=[{"role": "user", "content": "hi"}], tools=TOOLS_ANTH,
                        thinking={"type": "enabled", "budget_tokens": 1024}) as stream:
    streamed = "".join(stream.text_stream)
    final = stream.get_final_message()
assert streamed == "Streamed Claude text, in several pieces.", streamed
assert [b.type for b in final.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
assert final.content[0].signature == "sig-stream" and final.content[0].thinking == "Thinking it over step by step."
assert final.content[3].input == {"command": "cat README.md"}
ok("messages stream")

# 8. Anthropic SSE again, raw, each event validated strictly.
body = post_raw("/v1/messages", {"model": "claude-sonnet-4-5", "max_tokens": 100,
                                               "messages": [{"role": "user", "content": "hi"}],
                                               "stream": True, "tools": TOOLS_ANTH})
adapter = TypeAdapter(RawMessageStreamEvent)
events = sse_data(body)
for name, data in events:
    if name == "ping":
        continue
    event = adapter.validate_python(json.loads(data))
    assert event.type == name, (event.type, name)
assert events[-1][0] == "message_stop"
ok("messages stream strict")

# 9. Errors as each SDK classifies them.
try:
    an.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    raise AssertionError("429 not raised")
except anthropic.RateLimitError as e:
    assert e.response.headers["retry-after"] == "3"
    assert e.body["error"]["type"] == "rate_limit_error"
try:
    an.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    raise AssertionError("529 not raised")
except anthropic.APIStatusError as e:
    assert e.status_code == 529 and e.body["error"]["type"] == "overloaded_error"
try:
    oa.responses.create(model="gpt-5", input="hi")
    raise AssertionError("429 not raised")
except openai.RateLimitError as e:
    assert e.body["message"] == "Rate limit reached, please retry later."
ok("errors")
print("all ok", openai.__version__, anthropic.__version__)
