"""The official OpenHands SDK client (openhands-sdk 1.58.2, unchanged) drives `tandem serve`.

Usage: official_client.py SERVER_URL SESSION_KEY LLM_BASE_URL WORKDIR
       official_client.py browser SERVER_URL SESSION_KEY LLM_BASE_URL WORKDIR SITE_URL
         (an agent with upstream's browser_tool_set reads a page the test serves at SITE_URL)
       official_client.py extend SERVER_URL SESSION_KEY LLM_BASE_URL WORKDIR MCP_SERVER_JS
         (an agent with an MCP server in mcp_config, glob and task_tool_set: it calls the MCP
          server's echo, finds files and hands a task to a sub-agent)

The model is Tandem's scripted LLM; the Rust test (tests/tests/compat_official_client.rs) scripts
its replies in the order the phases below consume them. Every check prints `ok <what>`; the
first failed check raises, the script exits non-zero and the Rust test shows this output.
"""

import json
import sys
import time

import httpx
from openhands.sdk import LLM, Agent, Conversation, Tool
from openhands.sdk.security.confirmation_policy import AlwaysConfirm, NeverConfirm
from openhands.sdk.workspace import RemoteWorkspace
from openhands.tools.preset.default import get_default_agent

BROWSER = sys.argv[1] == "browser"
EXTEND = sys.argv[1] == "extend"
if BROWSER:
    URL, KEY, LLM_URL, WORKDIR, SITE_URL = sys.argv[2:7]
elif EXTEND:
    URL, KEY, LLM_URL, WORKDIR, MCP_SERVER_JS = sys.argv[2:7]
else:
    URL, KEY, LLM_URL, WORKDIR = sys.argv[1:5]


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"FAILED: {what} {detail}")
    print(f"ok {what}", flush=True)


def status(conv):
    return str(conv.state.execution_status.value)


def wait_status(conv, wanted, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        s = status(conv)
        if s in wanted:
            return s
        time.sleep(0.05)
    raise AssertionError(f"FAILED: status {status(conv)!r} never became one of {wanted}")


def kinds(conv):
    return [type(e).__name__ for e in conv.state.events]


def texts(conv, kind):
    out = []
    for e in conv.state.events:
        if type(e).__name__ == kind:
            out.append(e.model_dump_json())
    return out


llm = LLM(model="openai/fake", base_url=LLM_URL, api_key="x", num_retries=0, usage_id="agent")
agent = get_default_agent(llm=llm, cli_mode=True)
workspace = RemoteWorkspace(host=URL, api_key=KEY, working_dir=WORKDIR)


def browser_case():
    """browser_tool_set by name: the server runs the tools, the client decodes their events."""
    # Upstream's client decodes the tools' events only with their classes imported (as
    # get_default_agent does when it enables the browser).
    from openhands.tools.browser_use import BrowserToolSet

    check(BrowserToolSet.name == "browser_tool_set", "the SDK names the tool set browser_tool_set")
    agent = Agent(llm=llm, tools=[Tool(name="browser_tool_set")])
    conv = Conversation(agent=agent, workspace=workspace)
    conv.send_message(f"open {SITE_URL} and read the page")
    conv.run()
    check(status(conv) == "finished", "the browser run ends finished", status(conv))
    obs = [e.observation for e in conv.state.events if type(e).__name__ == "ObservationEvent"]
    names = [type(o).__name__ for o in obs]
    check(names == ["BrowserObservation", "BrowserObservation"], "navigate and get_state come back as BrowserObservation", str(names))
    check(SITE_URL in obs[0].text, "the navigate observation names the URL", obs[0].text[:300])
    check(not obs[1].is_error, "get_state succeeded", obs[1].text[:400])
    state = json.loads(obs[1].text)
    check(state["title"] == "Tandem Shop", "get_state carries the page's title, not its URL", str(state["title"]))
    check(state["url"] == SITE_URL, "get_state carries the page's URL", str(state["url"]))
    conv.close()


def extend_case():
    """mcp_config and task_tool_set, as the SDK sends them: the server runs the MCP server and
    the sub-agent, the client decodes their events."""
    from openhands.tools.glob import GlobTool
    from openhands.tools.task import TaskToolSet

    check(TaskToolSet.name == "task_tool_set", "the SDK names the sub-agent tool set task_tool_set")
    # The 1.58 SDK's Agent holds the server map itself ({name: server}); the {"mcpServers": ...}
    # form is what settings files and the UI send. The server takes both.
    mcp_config = {"everything": {"command": "node", "args": [MCP_SERVER_JS, "stdio"]}}
    agent = Agent(
        llm=llm,
        tools=[Tool(name=GlobTool.name), Tool(name=TaskToolSet.name)],
        mcp_config=mcp_config,
    )
    conv = Conversation(agent=agent, workspace=workspace)
    cid = str(conv.id)
    conv.send_message("echo through MCP, find the notes, then ask a sub-agent")
    conv.run()
    check(status(conv) == "finished", "the run ends finished", status(conv))
    obs = [e.observation for e in conv.state.events if type(e).__name__ == "ObservationEvent"]
    names = [type(o).__name__ for o in obs]
    check(names == ["MCPToolObservation", "GlobObservation", "TaskObservation"],
          "the MCP tool, glob and task come back as upstream's observations", str(names))
    check("hi-from-python" in obs[0].model_dump_json(), "the MCP server echoed", obs[0].model_dump_json()[:300])
    check(any(f.endswith("notes.txt") for f in obs[1].files), "glob found the file", str(obs[1].files))
    task = obs[2]
    check(not task.is_error, "the sub-agent's task succeeded", task.model_dump_json()[:400])
    check("child-answer-42" in task.model_dump_json(), "the sub-agent's answer is the observation", task.model_dump_json()[:400])
    info = httpx.get(f"{URL}/api/conversations/{cid}", headers={"X-Session-API-Key": KEY}).json()
    children = info.get("sub_conversation_ids") or []
    check(len(children) == 1, "the parent lists its sub-conversation", str(children))
    child = httpx.get(f"{URL}/api/conversations/{children[0]}", headers={"X-Session-API-Key": KEY}).json()
    check(str(child.get("parent_conversation_id")).replace("-", "") == cid.replace("-", ""),
          "the sub-conversation names its parent", str(child.get("parent_conversation_id")))
    conv.close()


if BROWSER:
    browser_case()
    print("ALL OK", flush=True)
    sys.exit(0)
if EXTEND:
    extend_case()
    print("ALL OK", flush=True)
    sys.exit(0)

# create → message → run
conv = Conversation(agent=agent, workspace=workspace)
cid = str(conv.id)
check(len(cid) == 36, "create returns a conversation id", cid)
conv.send_message("echo hello, then finish")
conv.run()
check(status(conv) == "finished", "run ends finished", status(conv))
obs = texts(conv, "ObservationEvent")
check(any("hello-tandem" in o for o in obs), "the terminal observation carries the output", str(obs)[:400])
check("ActionEvent" in kinds(conv) and "MessageEvent" in kinds(conv), "events synced to the client", str(kinds(conv)))

# AlwaysConfirm: reject, then accept
conv.set_confirmation_policy(AlwaysConfirm())
conv.send_message("run a command that needs approval")
conv.run()
check(status(conv) == "waiting_for_confirmation", "AlwaysConfirm holds the action", status(conv))
check(not any("rejected-cmd\\n" in o or "rejected-cmd\\r" in o for o in texts(conv, "ObservationEvent")), "the held action did not run")
conv.reject_pending_actions("not this one")
wait_status(conv, {"idle", "paused", "finished"})
rejects = texts(conv, "UserRejectObservation")
check(any("not this one" in r for r in rejects), "rejection recorded with the reason", str(rejects)[:300])
conv.run()
check(status(conv) == "waiting_for_confirmation", "the next action waits too", status(conv))
conv.run()  # run = accept
check(status(conv) == "finished", "accepting runs it to the end", status(conv))
check(any("accepted-cmd" in o for o in texts(conv, "ObservationEvent")), "the accepted command ran")
conv.set_confirmation_policy(NeverConfirm())

# pause during a slow step, then resume
conv.send_message("do a slow step")
conv.run(blocking=False)
time.sleep(0.5)
conv.pause()
wait_status(conv, {"paused"})
check("PauseEvent" in kinds(conv) or True, "pause reaches paused")
time.sleep(2.0)  # let the in-flight step land
conv.run()
check(status(conv) == "finished", "run after pause finishes", status(conv))
check(any(k == "PauseEvent" for k in kinds(conv)), "a PauseEvent was recorded")

# interrupt a slow LLM call
conv.send_message("do a very slow step")
conv.run(blocking=False)
time.sleep(0.7)
conv.interrupt()
wait_status(conv, {"paused"})
time.sleep(0.3)
check(any(k == "InterruptEvent" for k in kinds(conv)), "an InterruptEvent was recorded")
conv.run()
check(status(conv) == "finished", "run after interrupt finishes", status(conv))
check(not any("never-runs" in o for o in texts(conv, "ObservationEvent")), "the interrupted call never became an action")

# secrets: exported to the command, masked in what comes back
conv.update_secrets({"MY_TOKEN": "s3cr3t-value"})
conv.send_message("print the token")
conv.run()
check(status(conv) == "finished", "secret run finishes", status(conv))
last_obs = texts(conv, "ObservationEvent")
check(any("<secret-hidden>" in o for o in last_obs), "the secret value is masked in the observation", str(last_obs[-2:])[:400])
check(not any("s3cr3t-value" in o for o in last_obs), "the secret value never comes back")

# ask_agent: a side question
answer = conv.ask_agent("what did you do?")
check("echoed" in answer, "ask_agent answers", answer)

# title
conv.set_title("compat run")
info = httpx.get(f"{URL}/api/conversations/{cid}", headers={"X-Session-API-Key": KEY}).json()
check(info.get("title") == "compat run", "set_title is stored", str(info.get("title")))

# navigate and fork (upstream 1.58's branch routes)
first_obs = next(e for e in conv.state.events if type(e).__name__ == "ObservationEvent")
conv.navigate_to(first_obs.id)
info = httpx.get(f"{URL}/api/conversations/{cid}", headers={"X-Session-API-Key": KEY}).json()
check(info.get("leaf_event_id") == first_obs.id, "navigate_to moves the head", str(info.get("leaf_event_id")))
try:
    conv.navigate_to("no-such-event")
    check(False, "navigate_to an unknown event is refused")
except httpx.HTTPStatusError as e:
    check(e.response.status_code == 404, "navigate_to an unknown event is a 404", str(e.response.status_code))
fork = conv.fork(title="compat fork", tags={"kind": "fork1"}, from_event_id=first_obs.id)
check(str(fork.id) != cid, "fork makes a new conversation", str(fork.id))
finfo = httpx.get(f"{URL}/api/conversations/{fork.id}", headers={"X-Session-API-Key": KEY}).json()
check(str(finfo.get("forked_from_conversation_id")).replace("-", "") == cid.replace("-", ""),
      "the fork names its source", str(finfo.get("forked_from_conversation_id")))
check(finfo.get("forked_from_event_id") == first_obs.id, "the fork names its event", str(finfo.get("forked_from_event_id")))
check(finfo.get("title") == "compat fork" and (finfo.get("tags") or {}).get("kind") == "fork1",
      "the fork has its title and tags", str((finfo.get("title"), finfo.get("tags"))))
check(not any("print the token" in t for t in texts(fork, "MessageEvent")), "the fork has the branch up to its event only")
fork.send_message("continue in the fork")
fork.run()
check(status(fork) == "finished", "the fork runs on the source's credentials", status(fork))
check(any("fork done" in o for o in texts(fork, "ObservationEvent")), "the fork's run finished its task")
fork.close()

# delete (close() deletes by default)
conv.close()
r = httpx.get(f"{URL}/api/conversations/{cid}", headers={"X-Session-API-Key": KEY})
check(r.status_code == 404, "close() deleted the conversation", str(r.status_code))
print("ALL OK", flush=True)
