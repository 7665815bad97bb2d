// @ts-check
// Writes a finished conversation straight into the persisted layout `tandem serve` loads at
// start (`$TANDEM_HOME/conversations/<id>/{base_state.json, meta.json, events/event-NNNNN-<id>.json}`),
// shaped like what the engine writes: a system prompt, the user's task, then pairs of terminal
// or file-editor actions and their observations, a few agent messages, and the finish.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MODEL = "openai/scripted-e2e";

/**
 * @param {string} text
 * @returns {{ cache_prompt: boolean, text: string, type: "text" }[]}
 */
const content = (text) => [{ cache_prompt: false, text, type: "text" }];

/**
 * The i-th action of the synthetic run and its observation (terminal commands with a few lines
 * of output, file views and edits), varied so rows have different heights.
 * @param {number} i
 * @param {string} ws
 * @returns {{ tool: string, action: Record<string, unknown>, args: Record<string, unknown>, observation: Record<string, unknown>, thought: string }}
 */
function step(i, ws) {
  const file = `${ws}/src/module_${i % 37}.py`;
  switch (i % 4) {
    case 0: {
      const lines = Array.from({ length: 1 + (i % 7) }, (_, k) => `test_case_${i}_${k} PASSED`);
      const out = `${lines.join("\n")}\n[The command completed with exit code 0.]\n[Current working directory: ${ws}]`;
      return {
        tool: "terminal",
        thought: `Run the tests of module ${i % 37}.`,
        action: { command: `python -m pytest tests/test_module_${i % 37}.py -q`, is_input: false, reset: false, kind: "TerminalAction" },
        args: { command: `python -m pytest tests/test_module_${i % 37}.py -q`, summary: "Run the tests", security_risk: "LOW" },
        observation: {
          content: content(out),
          is_error: false,
          command: `python -m pytest tests/test_module_${i % 37}.py -q`,
          exit_code: 0,
          timeout: false,
          metadata: { exit_code: 0, pid: -1, username: "dev", hostname: "host", working_dir: ws, prefix: "", suffix: "\n[The command completed with exit code 0.]" },
          kind: "TerminalObservation",
        },
      };
    }
    case 1:
      return {
        tool: "terminal",
        thought: "",
        action: { command: `grep -n "def " ${file} | head -5`, is_input: false, reset: false, kind: "TerminalAction" },
        args: { command: `grep -n "def " ${file} | head -5`, summary: "List functions", security_risk: "LOW" },
        observation: {
          content: content(`12:def load_${i}(path):\n40:def save_${i}(path, data):\n[The command completed with exit code 0.]`),
          is_error: false,
          command: `grep -n "def " ${file} | head -5`,
          exit_code: 0,
          timeout: false,
          metadata: { exit_code: 0, pid: -1, username: "dev", hostname: "host", working_dir: ws, prefix: "", suffix: "" },
          kind: "TerminalObservation",
        },
      };
    case 2: {
      const old = `    return load_${i}(path)\n`;
      const neu = `    data = load_${i}(path)\n    return validate(data)\n`;
      return {
        tool: "file_editor",
        thought: `Validate what load_${i} returns.`,
        action: { command: "str_replace", path: file, old_str: old, new_str: neu, kind: "FileEditorAction" },
        args: { command: "str_replace", path: file, old_str: old, new_str: neu, summary: "Validate the data", security_risk: "MEDIUM" },
        observation: {
          content: content(`The file ${file} has been edited.`),
          is_error: false,
          command: "str_replace",
          path: file,
          prev_exist: true,
          old_content: `def read(path):\n${old}`,
          new_content: `def read(path):\n${neu}`,
          kind: "FileEditorObservation",
        },
      };
    }
    default:
      return {
        tool: "file_editor",
        thought: "",
        action: { command: "view", path: file, kind: "FileEditorAction" },
        args: { command: "view", path: file, summary: "Read the module", security_risk: "LOW" },
        observation: {
          content: content(`Here's the result of running \`cat -n\` on ${file}:\n     1\timport os\n     2\t\n     3\tdef read(path):\n     4\t    return open(path).read()\n`),
          is_error: false,
          command: "view",
          path: file,
          kind: "FileEditorObservation",
        },
      };
  }
}

/**
 * Writes a finished conversation with `pairs` action/observation pairs (2 * pairs + 4 events,
 * plus an agent message every 50 pairs). Returns its id (32 hex digits, as the folder is named).
 * @param {string} home TANDEM_HOME
 * @param {{ title: string, workspace: string, pairs: number, task?: string }} o
 */
export function writeConversation(home, o) {
  const uuid = randomUUID();
  const id = uuid.replace(/-/g, "");
  const dir = join(home, "conversations", id);
  const eventsDir = join(dir, "events");
  mkdirSync(eventsDir, { recursive: true });
  const start = Date.parse("2026-01-05T09:00:00Z");
  let n = 0;
  /** @type {string | undefined} */
  let parent;
  /** @param {Record<string, unknown>} ev */
  const write = (ev) => {
    const eid = randomUUID();
    const ts = new Date(start + n * 1500).toISOString().replace("Z", "");
    const full = { id: eid, timestamp: ts, ...(parent ? { parent_id: parent } : {}), ...ev };
    writeFileSync(join(eventsDir, `event-${String(n).padStart(5, "0")}-${eid}.json`), JSON.stringify(full));
    n++;
    parent = eid;
    return eid;
  };

  write({ source: "agent", system_prompt: { cache_prompt: false, text: "You are Tandem, a capable software engineering agent." }, tools: [], kind: "SystemPromptEvent" });
  const task = o.task ?? "Make every loader validate its data and keep the tests green.";
  const userId = write({ source: "user", llm_message: { role: "user", content: content(task), thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: "MessageEvent" });
  write({ source: "environment", key: "execution_status", value: "running", kind: "ConversationStateUpdateEvent" });
  for (let i = 0; i < o.pairs; i++) {
    if (i > 0 && i % 50 === 0) {
      write({ source: "agent", llm_message: { role: "assistant", content: content(`Progress: ${i} steps done, ${o.pairs - i} to go. The loaders so far validate their data.`), thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: "MessageEvent" });
    }
    const s = step(i, o.workspace);
    const callId = `call_${String(i).padStart(4, "0")}_0`;
    const actionId = write({
      source: "agent",
      thought: s.thought ? content(s.thought) : [],
      thinking_blocks: [],
      action: s.action,
      tool_name: s.tool,
      tool_call_id: callId,
      tool_call: { id: callId, name: s.tool, arguments: JSON.stringify(s.args), origin: "completion" },
      llm_response_id: `chatcmpl-${i}`,
      security_risk: s.args.security_risk,
      summary: s.args.summary,
      kind: "ActionEvent",
    });
    write({ source: "environment", tool_name: s.tool, tool_call_id: callId, observation: s.observation, action_id: actionId, extended_content: [], kind: "ObservationEvent" });
  }
  const leaf = write({ source: "agent", llm_message: { role: "assistant", content: content("All loaders validate their data; the tests pass."), thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: "MessageEvent" });
  write({ source: "environment", key: "execution_status", value: "finished", kind: "ConversationStateUpdateEvent" });

  const created = new Date(start).toISOString();
  const updated = new Date(start + n * 1500).toISOString();
  const llm = { model: MODEL, usage_id: "agent", num_retries: 0, stream: false, timeout: 300 };
  writeFileSync(
    join(dir, "base_state.json"),
    JSON.stringify({
      activated_knowledge_skills: [],
      agent: { kind: "Agent", llm, tools: [{ name: "terminal", params: {} }, { name: "file_editor", params: {} }, { name: "task_tracker", params: {} }], include_default_tools: ["FinishTool", "ThinkTool"] },
      confirmation_policy: { kind: "NeverConfirm" },
      execution_status: "finished",
      id: uuid,
      last_user_message_id: userId,
      leaf_event_id: leaf,
      max_iterations: 100000,
      persistence_dir: dir,
      secret_registry: { secret_sources: {} },
      stuck_detection: true,
      tags: {},
      workspace: { kind: "LocalWorkspace", working_dir: o.workspace },
    }),
  );
  writeFileSync(join(dir, "meta.json"), JSON.stringify({ id, title: o.title, created_at: created, updated_at: updated, autotitle: false }));
  return { id, events: n };
}
