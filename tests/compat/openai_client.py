"""The official `openai` Python client uses Tandem's OpenAI-compatible gateway.

Usage: openai_client.py SERVER_URL SESSION_KEY LLM_BASE_URL

The server's `default` LLM profile is Tandem's scripted LLM (at LLM_BASE_URL), which answers
the agent's requests in turn with "gateway reply one", "two", ... "six" (see compat_openai.rs).
First a profile `work` on the same LLM is saved over REST the way an upstream client does:
`POST /api/profiles/work` with `{"llm": <openhands.sdk.LLM dumped with its secrets>,
"include_secrets": true}`.
"""

import sys

import httpx
from openai import OpenAI, AuthenticationError, NotFoundError
from pydantic import SecretStr

URL, KEY, LLM_URL = sys.argv[1:4]
HEADER = "X-OpenHands-ServerConversation-ID"
PROFILE_KEY = "sk-profile-never-returned"


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"FAILED: {what} {detail}")
    print(f"ok {what}", flush=True)


# A profile saved as upstream clients save one.
from openhands.sdk import LLM  # noqa: E402

llm = LLM(model="openai/fake", api_key=SecretStr(PROFILE_KEY), base_url=LLM_URL, num_retries=0, usage_id="agent")
body = {"llm": llm.model_dump(mode="json", context={"expose_secrets": True}), "include_secrets": True}
rest = httpx.Client(base_url=URL, headers={"X-Session-API-Key": KEY}, timeout=30)
r = rest.post("/api/profiles/work", json=body)
check(r.status_code == 201 and r.json()["name"] == "work", "POST /api/profiles/work saves the profile", r.text)
listed = rest.get("/api/profiles")
check(any(p["name"] == "work" and p["api_key_set"] for p in listed.json()["profiles"]), "the profile is listed", listed.text)
detail = rest.get("/api/profiles/work", headers={"X-Expose-Secrets": "plaintext"})
check(detail.json()["config"]["api_key"] is None and detail.json()["api_key_set"], "its key is masked", detail.text)
check(PROFILE_KEY not in listed.text + detail.text, "no route answers the key")
check(rest.post("/api/profiles/work/activate").json()["name"] == "work", "the profile activates")
check(rest.get("/api/profiles").json()["active_profile"] == "work", "active_profile names it")

client = OpenAI(base_url=f"{URL}/v1", api_key=KEY, max_retries=0, timeout=60)

models = [m.id for m in client.models.list().data]
check({"openhands_default", "openhands_work"} <= set(models), "/v1/models lists openhands_ profiles", str(models))

# Chat completions: plain, then continued through the returned header.
raw = client.chat.completions.with_raw_response.create(
    model="openhands_work", messages=[{"role": "user", "content": "say something"}]
)
conversation = raw.headers.get(HEADER)
r = raw.parse()
check(r.choices[0].message.content == "gateway reply one", "a completion returns the agent's final text", repr(r))
check(r.choices[0].finish_reason == "stop", "finish_reason stop", str(r.choices[0].finish_reason))
check(r.usage is not None and r.usage.prompt_tokens > 0, "usage counts the run's tokens", str(r.usage))
check(bool(conversation), "the answer names its conversation", str(raw.headers))

raw = client.chat.completions.with_raw_response.create(
    model="openhands_work",
    messages=[{"role": "user", "content": "and then?"}],
    extra_headers={HEADER: conversation},
)
check(raw.parse().choices[0].message.content == "gateway reply two", "the header continues the conversation")
check(raw.headers.get(HEADER) == conversation, "in the same conversation", str(raw.headers.get(HEADER)))

# Streaming with the final usage chunk.
raw = client.chat.completions.with_raw_response.create(
    model="openhands_default",
    messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "again"}],
    stream=True,
    stream_options={"include_usage": True},
)
check(bool(raw.headers.get(HEADER)), "a streamed answer names its conversation too")
parts, finish, usage_chunk = [], None, None
for chunk in raw.parse():
    if chunk.choices:
        delta = chunk.choices[0].delta
        if delta and delta.content:
            parts.append(delta.content)
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    if chunk.usage is not None:
        usage_chunk = chunk
check("".join(parts) == "gateway reply three", "streamed chunks join to the final text", repr("".join(parts)))
check(finish == "stop", "the stream ends with finish_reason stop", str(finish))
check(
    usage_chunk is not None and usage_chunk.choices == [] and usage_chunk.usage.completion_tokens > 0,
    "include_usage adds a last chunk with usage",
    repr(usage_chunk),
)

# Responses: plain, continued with previous_response_id, streamed.
raw = client.responses.with_raw_response.create(model="openhands_work", input="hello", instructions="Be terse.")
first = raw.parse()
check(first.output_text == "gateway reply four", "responses.create answers output_text", repr(first))
check(first.usage.input_tokens > 0, "a response counts its tokens", repr(first.usage))
first_conversation = raw.headers.get(HEADER)
raw = client.responses.with_raw_response.create(
    model="openhands_work",
    previous_response_id=first.id,
    input=[{"role": "user", "content": [{"type": "input_text", "text": "go on"}]}],
)
second = raw.parse()
check(second.output_text == "gateway reply five", "previous_response_id continues", repr(second))
check(raw.headers.get(HEADER) == first_conversation, "in the same conversation")

kinds, deltas, final = [], [], None
for event in client.responses.create(model="openhands_work", input="stream please", stream=True):
    kinds.append(event.type)
    if event.type == "response.output_text.delta":
        deltas.append(event.delta)
    if event.type == "response.completed":
        final = event.response
check(
    kinds
    == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ],
    "a streamed response sends the standard events",
    str(kinds),
)
check("".join(deltas) == "gateway reply six", "its deltas join to the answer", repr(deltas))
check(final is not None and final.output_text == "gateway reply six", "response.completed carries it", repr(final))

# Errors in OpenAI's shape.
try:
    client.chat.completions.create(model="openhands_nope", messages=[{"role": "user", "content": "x"}])
    check(False, "an unknown model is refused")
except NotFoundError as e:
    check(e.code == "model_not_found", "an unknown model is a 404 model_not_found", repr(e)[:200])
try:
    client.responses.create(model="openhands_work", input="x", previous_response_id="resp_unknown")
    check(False, "an unknown previous_response_id is refused")
except NotFoundError as e:
    check(e.code == "previous_response_not_found", "an unknown previous_response_id is a 404", repr(e)[:200])
bad = OpenAI(base_url=f"{URL}/v1", api_key="wrong-key", max_retries=0)
try:
    bad.models.list()
    check(False, "a wrong key is refused")
except AuthenticationError as e:
    check(e.status_code == 401, "a wrong key is refused", repr(e)[:200])
print("ALL OK", flush=True)
