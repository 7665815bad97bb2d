#!/usr/bin/env node
// Generates ui/src/api/generated.ts from the agent server's OpenAPI document, or (--check) fails
// when the committed file is stale. The UI never hand-writes copies of wire types: they come
// from here.
//
// Where the document comes from, first that works:
//   1. --from <file|url> or $TANDEM_OPENAPI (file path or http URL);
//   2. our server: `cargo run --bin tandem -- serve --port 0` in a scratch TANDEM_HOME, then
//      GET <printed url>/openapi.json;
//   3. until our server serves one: upstream's recorded document (../shared/openhands/openapi.json
//      next to the repo), the shape our server is compatible with.
// The first line of generated.ts names the source, so --check compares like with like.
import { spawn } from "node:child_process";
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const uiDir = resolve(here, "..");
const repo = resolve(uiDir, "..");
const out = join(uiDir, "src/api/generated.ts");
const upstream = resolve(repo, "../shared/openhands/openapi.json");

const args = process.argv.slice(2);
const check = args.includes("--check");
const fromIdx = args.indexOf("--from");
const from = fromIdx >= 0 ? args[fromIdx + 1] : process.env.TANDEM_OPENAPI;

async function fromTandem() {
  // Only when the server crate exists; a cold cargo build takes minutes, so allow it time.
  if (!existsSync(join(repo, "agent-engine/server/src/lib.rs"))) return null;
  const home = await mkdtemp(join(tmpdir(), "tandem-openapi-"));
  const child = spawn(
    "cargo",
    ["run", "-q", "--bin", "tandem", "--", "serve", "--host", "127.0.0.1", "--port", "0"],
    { cwd: repo, env: { ...process.env, TANDEM_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
  );
  // If this script is stopped (Ctrl-C, CI timeout), stop the server and its build with it.
  const stopChild = () => { child.kill("SIGTERM"); process.exit(130); };
  process.once("SIGINT", stopChild);
  process.once("SIGTERM", stopChild);
  try {
    const url = await new Promise((ok, fail) => {
      let seen = "";
      const timer = setTimeout(() => fail(new Error("tandem serve printed no URL in 15 min")), 900_000);
      const onData = (b) => {
        seen += b.toString();
        const m = seen.match(/https?:\/\/(127\.0\.0\.1|localhost):\d+/);
        if (m) { clearTimeout(timer); ok(m[0]); }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("exit", (code) => { clearTimeout(timer); fail(new Error(`tandem serve exited (${code}): ${seen.slice(-400)}`)); });
    });
    const res = await fetch(`${url}/openapi.json`);
    if (!res.ok) throw new Error(`GET ${url}/openapi.json -> ${res.status}`);
    return { text: await res.text(), source: "tandem serve /openapi.json" };
  } catch (e) {
    console.warn(`gen:api: our server gave no OpenAPI document (${e.message})`);
    return null;
  } finally {
    process.off("SIGINT", stopChild);
    process.off("SIGTERM", stopChild);
    child.kill("SIGTERM");
    await rm(home, { recursive: true, force: true });
  }
}

async function load() {
  if (from) {
    const text = /^https?:/.test(from) ? await (await fetch(from)).text() : await readFile(from, "utf8");
    return { text, source: `explicit ${/^https?:/.test(from) ? "url" : "file"}` };
  }
  const ours = await fromTandem();
  if (ours) return ours;
  if (existsSync(upstream)) {
    return { text: await readFile(upstream, "utf8"), source: "upstream openhands-agent-server 1.58.2 openapi.json" };
  }
  return null;
}

const doc = await load();
if (!doc) {
  if (check) {
    console.warn("check:api: no OpenAPI document available (no server, no upstream snapshot); skipped");
    process.exit(0);
  }
  console.error("gen:api: no OpenAPI document available");
  process.exit(1);
}
// Upstream's discriminator mappings are keyed by pydantic's internal names
// ("openhands__sdk__...ActionEvent-Output__1"), not by the `kind` values on the wire, and
// openapi-typescript writes mapping keys into `kind`. Rebuild each mapping from the target
// schemas' own `kind` constant so the union narrows on the real wire value.
function fixDiscriminators(spec) {
  const schemas = spec.components?.schemas ?? {};
  const constOf = (ref, prop) => {
    const s = schemas[ref.replace("#/components/schemas/", "")];
    const p = s?.properties?.[prop];
    return p?.const ?? (p?.enum?.length === 1 ? p.enum[0] : undefined);
  };
  const visit = (node) => {
    if (!node || typeof node !== "object") return;
    if (node.discriminator?.mapping) {
      const prop = node.discriminator.propertyName;
      const fixed = {};
      for (const ref of Object.values(node.discriminator.mapping)) {
        const k = constOf(ref, prop);
        if (k === undefined) { delete node.discriminator.mapping; break; }
        fixed[k] = ref;
      }
      if (node.discriminator.mapping) node.discriminator.mapping = fixed;
    }
    for (const v of Object.values(node)) visit(v);
  };
  visit(spec);
  return spec;
}

// A top-level union that refers to itself (upstream's `JSONValue`) becomes a TypeScript type
// alias that references itself through `components["schemas"]`, which tsc rejects. Such
// schemas describe "any JSON": make them `unknown` and read them defensively.
function breakSelfReferentialUnions(spec) {
  const schemas = spec.components?.schemas ?? {};
  for (const [name, s] of Object.entries(schemas)) {
    const union = s.anyOf ?? s.oneOf;
    if (!union) continue;
    const me = `#/components/schemas/${name}`;
    const selfRef = union.some((m) => m.items?.$ref === me || m.additionalProperties?.$ref === me);
    if (selfRef) schemas[name] = { description: `${s.description ?? name} (any JSON; typed unknown)` };
  }
  return spec;
}
const spec = breakSelfReferentialUnions(fixDiscriminators(JSON.parse(doc.text)));
// defaultNonNullable: false keeps fields that have a server-side default optional, so request
// bodies need not spell out every default (`cache_prompt`, `reason`, ...).
const ast = await openapiTS(spec, { alphabetize: true, defaultNonNullable: false });
const header =
  `// Source: ${doc.source}\n` +
  "// GENERATED by `npm run -w ui gen:api` (openapi-typescript). Do not edit; regenerate.\n\n";
const generated = header + astToString(ast);

if (check) {
  const current = existsSync(out) ? await readFile(out, "utf8") : "";
  // Compare the types, not the header naming where the document came from.
  const body = (t) => t.split("\n").slice(3).join("\n");
  if (body(current) !== body(generated)) {
    console.error(`check:api: ui/src/api/generated.ts is stale against ${doc.source}; run \`npm run -w ui gen:api\` and commit it`);
    process.exit(1);
  }
  console.log(`check:api: generated.ts is up to date (${doc.source})`);
} else {
  await writeFile(out, generated);
  console.log(`gen:api: wrote ${out} from ${doc.source} (${generated.length} bytes)`);
}
