#!/usr/bin/env node
// Generates the UI's API types from OpenAPI documents, or (--check) fails when a committed file
// is stale. The UI never hand-writes copies of wire types: they come from here.
//
//   src/api/generated.ts  <- upstream's recorded document (../shared/openhands/openapi.json next
//                            to the repo; or --from <file|url> / $TANDEM_OPENAPI): the OpenHands
//                            API our server is compatible with.
//   src/api/tandem.gen.ts <- ui/openapi.tandem.json: our server's own document (what
//                            `tandem openapi` prints and `tandem serve` serves at /openapi.json),
//                            with Tandem's routes and body schemas. Committed, so generating
//                            needs no server or build. Ends with `discriminatorValues`: the
//                            `kind`s of each union (Action, Observation, Event).
//
// Flags:
//   --snapshot  first rewrite ui/openapi.tandem.json from `$TANDEM_BIN openapi` (else
//               `cargo run -q --bin tandem -- openapi`).
//   --check     write nothing; exit 1 when a generated file is stale against its document,
//               or (when $TANDEM_BIN is set) when ui/openapi.tandem.json differs from what
//               `$TANDEM_BIN openapi` prints.
// The first line of each generated file names its source, so --check compares like with like.
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const uiDir = resolve(here, "..");
const repo = resolve(uiDir, "..");
const upstream = resolve(repo, "../shared/openhands/openapi.json");
const snapshot = join(uiDir, "openapi.tandem.json");

const args = process.argv.slice(2);
const check = args.includes("--check");
const refresh = args.includes("--snapshot");
const fromIdx = args.indexOf("--from");
const from = fromIdx >= 0 ? args[fromIdx + 1] : process.env.TANDEM_OPENAPI;
const bin = process.env.TANDEM_BIN;

/** Our server's document as `tandem openapi` prints it now. */
function tandemDocument() {
  const opts = { cwd: repo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] };
  if (bin) return execFileSync(bin, ["openapi"], opts);
  return execFileSync("cargo", ["run", "-q", "--bin", "tandem", "--", "openapi"], opts);
}

async function upstreamDocument() {
  if (from) {
    const text = /^https?:/.test(from) ? await (await fetch(from)).text() : await readFile(from, "utf8");
    return { text, source: `explicit ${/^https?:/.test(from) ? "url" : "file"}` };
  }
  if (existsSync(upstream)) {
    return { text: await readFile(upstream, "utf8"), source: "upstream openhands-agent-server 1.58.2 openapi.json" };
  }
  return null;
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

// The values of each discriminated union's tag (`kind`), read from its discriminator mapping:
// the UI tells a kind it knows from one a newer or an upstream server sent, and the types say
// which kinds need a case. Only for our server's document, whose unions are ours.
function discriminatorValues(spec) {
  const unions = Object.entries(spec.components?.schemas ?? {})
    .filter(([, s]) => s.discriminator?.mapping)
    .map(([name, s]) => `    ${name}: ${JSON.stringify(Object.keys(s.discriminator.mapping))},`);
  if (unions.length === 0) return "";
  return (
    "\n/** The tag values of each discriminated union above (its discriminator mapping). */\n" +
    `export const discriminatorValues = {\n${unions.join("\n")}\n} as const;\n`
  );
}

async function generate(doc, { kinds = false } = {}) {
  // Read before fixDiscriminators, which drops the mappings it cannot rebuild (members that are
  // an `allOf`, as Tandem's events are: their `kind` is in the member, so nothing is lost).
  const values = kinds ? discriminatorValues(JSON.parse(doc.text)) : "";
  const spec = breakSelfReferentialUnions(fixDiscriminators(JSON.parse(doc.text)));
  // defaultNonNullable: false keeps fields that have a server-side default optional, so request
  // bodies need not spell out every default (`cache_prompt`, `reason`, ...).
  const ast = await openapiTS(spec, { alphabetize: true, defaultNonNullable: false });
  const header =
    `// Source: ${doc.source}\n` +
    "// GENERATED by `npm run -w ui gen:api` (openapi-typescript). Do not edit; regenerate.\n\n";
  return header + astToString(ast) + values;
}

// Compare the types, not the header naming where the document came from.
const body = (t) => t.split("\n").slice(3).join("\n");
const rel = (p) => p.slice(repo.length + 1);
let stale = false;

async function emit(out, doc, options) {
  const generated = await generate(doc, options);
  if (check) {
    const current = existsSync(out) ? await readFile(out, "utf8") : "";
    if (body(current) !== body(generated)) {
      console.error(`check:api: ${rel(out)} is stale against ${doc.source}; run \`npm run -w ui gen:api\` and commit it`);
      stale = true;
    } else {
      console.log(`check:api: ${rel(out)} is up to date (${doc.source})`);
    }
  } else {
    await writeFile(out, generated);
    console.log(`gen:api: wrote ${rel(out)} from ${doc.source} (${generated.length} bytes)`);
  }
}

// Our server's document: the committed snapshot (refreshed first with --snapshot).
if (refresh && !check) {
  await writeFile(snapshot, tandemDocument());
  console.log(`gen:api: wrote ${rel(snapshot)} from \`tandem openapi\``);
}
if (check && bin) {
  const current = existsSync(snapshot) ? await readFile(snapshot, "utf8") : "";
  if (current !== tandemDocument()) {
    console.error(`check:api: ${rel(snapshot)} differs from \`tandem openapi\`; run \`npm run -w ui gen:api:snapshot\` and commit it`);
    stale = true;
  } else {
    console.log(`check:api: ${rel(snapshot)} matches \`tandem openapi\``);
  }
}
if (!existsSync(snapshot)) {
  console.error(`gen:api: ${rel(snapshot)} is missing; run \`npm run -w ui gen:api:snapshot\``);
  process.exit(1);
}
await emit(
  join(uiDir, "src/api/tandem.gen.ts"),
  { text: await readFile(snapshot, "utf8"), source: "tandem openapi (ui/openapi.tandem.json)" },
  { kinds: true },
);

// Upstream's document.
const up = await upstreamDocument();
if (up) {
  await emit(join(uiDir, "src/api/generated.ts"), up);
} else if (check) {
  console.warn("check:api: upstream's OpenAPI document is not next to the repo; generated.ts not checked");
} else {
  console.warn("gen:api: upstream's OpenAPI document is not next to the repo; generated.ts left as is");
}
if (stale) process.exit(1);
