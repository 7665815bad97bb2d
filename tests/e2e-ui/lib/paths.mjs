// @ts-check
// Where the suite finds what it runs (the `tandem` and `scripted-llm` binaries, the UI build,
// chromium) and where it leaves its artefacts.
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Debian's chromium (playwright-core never downloads a browser here). */
export const chromiumPath = process.env.TANDEM_CHROMIUM ?? "/usr/bin/chromium";

/** The UI build `tandem serve` serves at /ui/. */
export const uiDir = process.env.TANDEM_UI_DIR ?? join(repoRoot, "ui", "dist");

/**
 * A binary of the cargo build: `$<envName>`, else `$CARGO_TARGET_DIR/debug/<name>`, else
 * `target/debug/<name>` of the checkout.
 * @param {string} name
 * @param {string} envName
 * @param {string[]} [siblingsOf] binaries whose folder is tried first (e.g. $TANDEM_BIN's)
 */
function cargoBinary(name, envName, siblingsOf = []) {
  const candidates = [
    process.env[envName],
    ...siblingsOf.map((p) => join(dirname(p), name)),
    process.env.CARGO_TARGET_DIR ? join(process.env.CARGO_TARGET_DIR, "debug", name) : undefined,
    join(repoRoot, "target", "debug", name),
  ].filter(/** @returns {c is string} */ (c) => typeof c === "string" && c.length > 0);
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    throw new Error(
      `${name} not found (tried ${candidates.join(", ")}): build it (cargo build -p ${name === "tandem" ? "tandem-cli --bin tandem" : "tandem-testkit --bin scripted-llm"}) or set ${envName}`,
    );
  }
  return found;
}

export function tandemBin() {
  return cargoBinary("tandem", "TANDEM_BIN");
}

export function scriptedLlmBin() {
  const t = process.env.TANDEM_BIN;
  return cargoBinary("scripted-llm", "SCRIPTED_LLM_BIN", t ? [t] : []);
}

/** Screenshots and logs of a run: `$TANDEM_E2E_ARTEFACTS`, else target/e2e-ui of the checkout. */
export function artefactDir() {
  const dir = process.env.TANDEM_E2E_ARTEFACTS ?? join(repoRoot, "target", "e2e-ui");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The README's screenshots. */
export const readmeShotsDir = join(repoRoot, "docs", "screenshots");
