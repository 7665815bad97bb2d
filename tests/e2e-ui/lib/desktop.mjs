// @ts-check
// A real X desktop on this machine for the Desktop pane's tests: Xvfb on a free display, its
// root window painted one known colour, and x11vnc serving it on a loopback port without a
// password, as the sandbox's entrypoint runs them (the server's authenticated socket is the
// only way in).
import { execFile, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Starts `cmd` and resolves with the first stdout line matching `ready` (its first group).
 * @param {string} cmd
 * @param {string[]} args
 * @param {RegExp} ready
 * @param {string} log where everything it prints goes too
 * @returns {Promise<{ child: import("node:child_process").ChildProcess, value: string }>}
 */
function startUntil(cmd, args, ready, log) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} did not print ${ready} within 30 s; stderr:\n${err}`));
    }, 30_000);
    child.stderr?.on("data", (/** @type {Buffer} */ c) => {
      err += c.toString("utf8");
      appendFileSync(log, c);
    });
    child.stdout?.on("data", (/** @type {Buffer} */ c) => {
      out += c.toString("utf8");
      appendFileSync(log, c);
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, value: m[1] ?? "" });
      }
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${cmd} (scripts/setup.sh installs it): ${e.message}`));
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code ?? signal}) before it was ready; stderr:\n${err}`));
    });
  });
}

/** @param {import("node:child_process").ChildProcess} child */
async function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(t);
}

/**
 * @typedef {object} Desktop
 * @property {string} display the X display (`:N`)
 * @property {string} vncAddr `127.0.0.1:<port>` of its VNC server
 * @property {{ width: number, height: number }} size
 * @property {() => Promise<{ x: number, y: number }>} pointer where the X pointer is now
 * @property {() => Promise<void>} stop ends x11vnc and Xvfb
 */

/**
 * @param {{ width?: number, height?: number, colour: string, log: string }} o `colour` paints the root window (`#rrggbb`); what Xvfb and x11vnc print goes to `log`
 * @returns {Promise<Desktop>}
 */
export async function startDesktop(o) {
  const size = { width: o.width ?? 1024, height: o.height ?? 768 };
  // Xvfb picks a free display and writes its number on the given fd; -noreset keeps the root's
  // colour when xsetroot, its only client at that moment, disconnects.
  const xvfb = await startUntil("Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0", `${size.width}x${size.height}x24`], /^(\d+)\s*$/m, o.log);
  const display = `:${xvfb.value}`;
  /** @type {import("node:child_process").ChildProcess | null} */ let vnc = null;
  try {
    await run("xsetroot", ["-display", display, "-solid", o.colour]);
    // rfbport 0 is not "any": x11vnc picks the first free port from 5900 and prints it.
    const started = await startUntil("x11vnc", ["-display", display, "-localhost", "-forever", "-shared", "-nopw", "-autoport", "5900"], /PORT=(\d+)/, o.log);
    vnc = started.child;
    const port = started.value;
    return {
      display,
      vncAddr: `127.0.0.1:${port}`,
      size,
      async pointer() {
        // x11vnc answers remote-control queries through an X property of the display.
        const { stdout } = await run("x11vnc", ["-display", display, "-sync", "-query", "pointer_pos"]);
        const m = stdout.match(/pointer_pos:(-?\d+),(-?\d+)/);
        if (!m) throw new Error(`x11vnc -query pointer_pos answered ${JSON.stringify(stdout)}`);
        return { x: Number(m[1]), y: Number(m[2]) };
      },
      async stop() {
        if (vnc) await kill(vnc);
        await kill(xvfb.child);
      },
    };
  } catch (e) {
    if (vnc) await kill(vnc);
    await kill(xvfb.child);
    throw e;
  }
}
