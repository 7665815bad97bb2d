"""The official `openai` Python client uses Tandem's OpenAI-compatible gateway.

Usage: openai_client.py SERVER_URL SESSION_KEY

The server's default LLM profile is Tandem's scripted LLM, which answers the first chat with
"gateway reply one" and the second with "gateway reply two" (see compat_openai.rs).
"""

import sys

from openai import OpenAI

URL, KEY = sys.argv[1:3]


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"FAILED: {what} {detail}")
    print(f"ok {what}", flush=True)


client = OpenAI(base_url=f"{URL}/v1", api_key=KEY, max_retries=0, timeout=60)

models = [m.id for m in client.models.list().data]
check(any(m.startswith("tandem_") for m in models), "/v1/models lists tandem_ profiles", str(models))
model = "tandem_default" if "tandem_default" in models else models[0]

r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "say something"}])
text = r.choices[0].message.content
check(text == "gateway reply one", "non-streaming completion returns the agent's final text", repr(text))
check(r.choices[0].finish_reason == "stop", "finish_reason stop", str(r.choices[0].finish_reason))
check(r.usage is not None and r.usage.total_tokens >= 0, "usage present", str(r.usage))

stream = client.chat.completions.create(
    model=model, messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "again"}], stream=True
)
parts = []
finish = None
for chunk in stream:
    if chunk.choices:
        delta = chunk.choices[0].delta
        if delta and delta.content:
            parts.append(delta.content)
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
check("".join(parts) == "gateway reply two", "streamed chunks join to the final text", repr("".join(parts)))
check(finish == "stop", "the stream ends with finish_reason stop", str(finish))

bad = OpenAI(base_url=f"{URL}/v1", api_key="wrong-key", max_retries=0)
try:
    bad.models.list()
    check(False, "a wrong key is refused")
except Exception as e:  # openai.AuthenticationError
    check("401" in str(e) or "uthentication" in type(e).__name__, "a wrong key is refused", repr(e)[:200])
print("ALL OK", flush=True)
