// @ts-check
// The upstream OpenHands agent server (openhands-agent-server 1.58.2 from PyPI, installed by
// scripts/setup.sh into a Python 3.12 venv) as a remote backend for the UI.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { deadPort, newKey } from "./stack.mjs";

/** The venv with the upstream server: `$TANDEM_OH_VENV`, else ~/.cache/tandem/oh-venv. */
function venv() {
  const dir = process.env.TANDEM_OH_VENV ?? join(homedir(), ".cache", "tandem", "oh-venv");
  if (!existsSync(join(dir, "bin", "python"))) {
    throw new Error(`the OpenHands venv is missing at ${dir}: run scripts/setup.sh (it installs openhands-agent-server 1.58.2) or set TANDEM_OH_VENV`);
  }
  return dir;
}

export class UpstreamServer {
  /** @type {import("node:child_process").ChildProcess | null} */ child = null;
  /** @type {string} */ baseUrl = "";
  /** @type {string} */ key = newKey();
  /** @type {string} */ runDir = mkdtempSync(join(tmpdir(), "tandem-e2e-upstream-"));
  /** The folder conversations work in. */
  get workspace() {
    return join(this.runDir, "project");
  }

  /**
   * Starts it on a free loopback port and waits for /health (its imports take 15–50 s here).
   * @returns {Promise<UpstreamServer>}
   */
  static async start() {
    const s = new UpstreamServer();
    try {
      await s.#start();
    } catch (e) {
      s.stop();
      throw e;
    }
    return s;
  }

  async #start() {
    for (const d of ["conversations", "project", "bash_events", "tmux"]) mkdirSync(join(this.runDir, d), { recursive: true });
    const port = await deadPort();
    const log = join(this.runDir, "server.log");
    const out = openSync(log, "w");
    this.child = spawn(join(venv(), "bin", "python"), ["-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", String(port)], {
      cwd: this.runDir,
      detached: true,
      stdio: ["ignore", out, out],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? this.runDir,
        LANG: "C.UTF-8",
        OH_CONVERSATIONS_PATH: join(this.runDir, "conversations"),
        OH_WORKSPACE_PATH: this.workspace,
        OH_BASH_EVENTS_DIR: join(this.runDir, "bash_events"),
        OH_ENABLE_VSCODE: "false",
        OH_ENABLE_BROWSER: "false",
        OH_SESSION_API_KEYS_0: this.key,
        OH_SECRET_KEY: "e2e-secret",
        LITELLM_LOCAL_MODEL_COST_MAP: "True",
        OPENHANDS_SUPPRESS_BANNER: "1",
        TMUX_TMPDIR: join(this.runDir, "tmux"),
      },
    });
    this.baseUrl = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`the upstream server exited (${this.child.exitCode}):\n${tail(log)}`);
      try {
        const res = await fetch(`${this.baseUrl}/health`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the upstream server did not answer /health within 180 s:\n${tail(log)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Kills its process group and its tmux server, and removes its folder. */
  stop() {
    if (this.child?.pid && this.child.exitCode === null) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    // Its terminals are tmux servers on named sockets under the TMUX_TMPDIR it was given
    // (tmux-<uid>/openhands-<id>); each one is told to exit before its folder goes.
    const tmuxDir = join(this.runDir, "tmux");
    for (const sub of existsSync(tmuxDir) ? readdirSync(tmuxDir) : []) {
      let sockets = [];
      try {
        sockets = readdirSync(join(tmuxDir, sub));
      } catch {
        continue; // not a folder
      }
      for (const socket of sockets) {
        spawnSync("tmux", ["-S", join(tmuxDir, sub, socket), "kill-server"], { stdio: "ignore", timeout: 5000 });
      }
    }
    if (!process.env.TANDEM_E2E_KEEP) rmSync(this.runDir, { recursive: true, force: true });
  }
}

/** @param {string} file */
function tail(file) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "(no log)";
  }
}
