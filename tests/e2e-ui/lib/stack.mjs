// @ts-check
// A real backend for the UI: a scripted LLM (the testkit's `scripted-llm`) and `tandem serve`
// with its own temporary TANDEM_HOME, session key and free port, all on 127.0.0.1.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { artefactDir, scriptedLlmBin, tandemBin, uiDir } from "./paths.mjs";

/**
 * One step of a scripted-llm script (see agent-engine/demo/src/script.rs).
 * @typedef {{ type: "reply", text?: string, tool_calls?: { name: string, arguments: Record<string, unknown> }[], delay_ms?: number }} ScriptStep
 */

/**
 * @typedef {object} Proc
 * @property {import("node:child_process").ChildProcess} child
 * @property {() => string} output everything it printed so far
 */

/**
 * Starts `cmd` and waits until a line of its stdout matches `ready`; the match is returned.
 * Everything the process prints goes to `log` too.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ env: NodeJS.ProcessEnv, cwd?: string, ready: RegExp, log: string, timeoutMs?: number }} o
 * @returns {Promise<{ proc: Proc, match: RegExpMatchArray }>}
 */
function startProcess(cmd, args, o) {
  const child = spawn(cmd, args, { env: o.env, cwd: o.cwd, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let stdout = "";
  const proc = { child, output: () => out };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} did not print ${o.ready} within ${o.timeoutMs ?? 30000} ms; it printed:\n${out}`));
    }, o.timeoutMs ?? 30_000);
    /** @param {Buffer} chunk */
    const onData = (chunk) => {
      const s = chunk.toString("utf8");
      out += s;
      appendFileSync(o.log, s);
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", (/** @type {Buffer} */ chunk) => {
      onData(chunk);
      stdout += chunk.toString("utf8");
      const m = stdout.match(o.ready);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, match: m });
      }
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${cmd}: ${e.message}`));
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code ?? signal}) before it was ready; it printed:\n${out}`));
    });
  });
}

/**
 * Stops a process: SIGTERM, then SIGKILL if it has not exited after `graceMs`.
 * @param {Proc | null} p
 * @param {number} [graceMs]
 */
async function stopProcess(p, graceMs = 5000) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((resolve) => p.child.once("exit", resolve));
  p.child.kill("SIGTERM");
  const t = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(t);
}

/** A random session key. */
export function newKey() {
  return randomBytes(16).toString("hex");
}

/**
 * @typedef {object} StackOptions
 * @property {string} name names the log file and temp folder
 * @property {(workspace: string) => ScriptStep[]} [script] the LLM's steps (absolute paths need the workspace); none: the LLM answers no request
 * @property {Record<string, string>} [files] workspace files to create (relative path → text)
 * @property {string} [key] the session key (random when absent)
 * @property {(home: string, workspace: string) => void} [prepareHome] writes into TANDEM_HOME before the server starts
 * @property {string[]} [allowOrigins] browser origins allowed to call the API (`--allow-origin`)
 * @property {boolean} [demo] the server plays its built-in demo LLM (`tandem serve --llm demo`) instead of a scripted one; `script` is then unused
 * @property {Record<string, string>} [env] more environment for `tandem serve` (e.g. TANDEM_VNC_ADDR)
 */

/**
 * A running backend. `stop()` ends both processes and removes the temporary folders.
 */
export class Stack {
  /** @type {Proc | null} */ llm = null;
  /** @type {Proc | null} */ server = null;
  /** @type {string} */ home;
  /** @type {string} */ workspace;
  /** @type {string} */ key;
  /** @type {string} */ baseUrl = "";
  /** @type {string} */ log;

  /** @param {StackOptions} o */
  constructor(o) {
    this.home = mkdtempSync(join(tmpdir(), `tandem-e2e-${o.name}-`));
    this.workspace = join(this.home, "project");
    this.key = o.key ?? newKey();
    this.log = join(artefactDir(), `${o.name}.log`);
    writeFileSync(this.log, "");
  }

  /** The address that opens the UI on this backend without asking for the key. */
  get uiUrl() {
    return `${this.baseUrl}/ui/#key=${this.key}`;
  }

  /**
   * @param {StackOptions} o
   * @returns {Promise<Stack>}
   */
  static async start(o) {
    const s = new Stack(o);
    try {
      await s.#start(o);
    } catch (e) {
      await s.stop();
      throw e;
    }
    return s;
  }

  /** @param {StackOptions} o */
  async #start(o) {
    mkdirSync(this.workspace, { recursive: true });
    for (const [rel, text] of Object.entries(o.files ?? {})) {
      const p = join(this.workspace, rel);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, text);
    }
    o.prepareHome?.(this.home, this.workspace);
    this.#origins = (o.allowOrigins ?? []).flatMap((origin) => ["--allow-origin", origin]);
    this.#env = o.env ?? {};
    if (o.demo) {
      this.#demo = true;
      await this.startServer();
      return;
    }
    const scriptFile = join(this.home, "llm-script.json");
    // Title and summary requests carry no tools: a fixed text answers them without using steps.
    writeFileSync(scriptFile, JSON.stringify({ steps: o.script?.(this.workspace) ?? [], no_tools_text: "End-to-end test" }, null, 2));
    const llm = await startProcess(scriptedLlmBin(), ["--host", "127.0.0.1", "--port", "0", "--script", scriptFile], {
      env: this.#baseEnv(),
      ready: /listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/,
      log: this.log,
    });
    this.llm = llm.proc;
    this.#llmUrl = llm.match[1] ?? "";
    await this.startServer();
  }

  /** The environment both processes start from: nothing of the test runner's beyond PATH and HOME. */
  #baseEnv() {
    return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? this.home, LANG: "C.UTF-8" };
  }

  /** @type {string} */ #llmUrl = "";
  /** @type {string[]} */ #origins = [];
  /** @type {boolean} */ #demo = false;
  /** @type {Record<string, string>} */ #env = {};

  /**
   * Starts `tandem serve` on `port` (0: a free one), with this stack's home, key and LLM.
   * @param {number} [port]
   */
  async startServer(port = 0) {
    const llm = this.#demo
      ? { args: ["--llm", "demo"], env: {} }
      : {
          args: [],
          env: { LLM_MODEL: "openai/scripted-e2e", LLM_BASE_URL: this.#llmUrl, LLM_API_KEY: "e2e-not-a-real-key", LLM_NUM_RETRIES: "0" },
        };
    const args = ["serve", "--host", "127.0.0.1", "--port", String(port), "--session-key", this.key, ...this.#origins, ...llm.args];
    const server = await startProcess(tandemBin(), args, {
      env: {
        ...this.#baseEnv(),
        TANDEM_HOME: this.home,
        TANDEM_UI_DIR: uiDir,
        OH_WORKSPACE_PATH: this.workspace,
        ...llm.env,
        ...this.#env,
        RUST_LOG: process.env.RUST_LOG ?? "warn",
      },
      cwd: this.workspace,
      ready: /Open the UI: (http:\/\/127\.0\.0\.1:\d+)\/ui\//,
      log: this.log,
      timeoutMs: 60_000,
    });
    this.server = server.proc;
    this.baseUrl = server.match[1] ?? "";
  }

  /** Kills `tandem serve` at once (SIGKILL), as a crash would; the LLM keeps running. */
  async killServer() {
    const p = this.server;
    if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
    const exited = new Promise((resolve) => p.child.once("exit", resolve));
    p.child.kill("SIGKILL");
    await exited;
    this.server = null;
  }

  /** The scripted LLM's OpenAI-compatible base URL (`http://127.0.0.1:<port>/v1`). */
  get llmUrl() {
    return this.#llmUrl;
  }

  /** The port the server listens on. */
  get port() {
    return Number(new URL(this.baseUrl).port);
  }

  /**
   * A REST call with the session key.
   * @param {string} path
   * @param {RequestInit} [init]
   * @returns {Promise<unknown>}
   */
  async api(path, init = {}) {
    const res = await fetch(this.baseUrl + path, {
      ...init,
      headers: { "content-type": "application/json", "X-Session-API-Key": this.key, ...(init.headers ?? {}) },
    });
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  }

  async stop() {
    await stopProcess(this.server);
    await stopProcess(this.llm);
    this.server = null;
    this.llm = null;
    if (!process.env.TANDEM_E2E_KEEP) rmSync(this.home, { recursive: true, force: true });
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function deadPort() {
  const net = await import("node:net");
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
