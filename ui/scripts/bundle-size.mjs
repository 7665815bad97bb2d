#!/usr/bin/env node
// Prints the size of ui/dist (raw and gzip) per asset kind after `vite build`, so the bundle
// size is visible in every build log and can be reported.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, extname, dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "../dist");
const files = [];
(function walk(d) {
  for (const n of readdirSync(d)) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) walk(p); else files.push(p);
  }
})(dist);
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const byKind = new Map();
let raw = 0, gz = 0;
for (const f of files) {
  const buf = readFileSync(f);
  const g = /\.(js|css|html|svg|json)$/.test(f) ? gzipSync(buf).length : buf.length;
  const k = extname(f) || "other";
  const e = byKind.get(k) ?? { raw: 0, gz: 0, n: 0 };
  e.raw += buf.length; e.gz += g; e.n += 1; byKind.set(k, e);
  raw += buf.length; gz += g;
}
console.log("\nUI bundle size (ui/dist):");
for (const [k, e] of [...byKind].sort((a, b) => b[1].raw - a[1].raw)) {
  console.log(`  ${k.padEnd(8)} ${String(e.n).padStart(3)} files  ${kb(e.raw).padStart(12)}  gzip ${kb(e.gz).padStart(11)}`);
}
console.log(`  total    ${String(files.length).padStart(3)} files  ${kb(raw).padStart(12)}  gzip ${kb(gz).padStart(11)}`);

// What a cold start downloads: the entry script and stylesheet index.html names (Monaco, xterm
// and the workers load on demand when a conversation opens).
const html = readFileSync(join(dist, "index.html"), "utf8");
let startRaw = 0, startGz = 0;
for (const m of html.matchAll(/(?:src|href)="\.\/([^"]+\.(?:js|css))"/g)) {
  const buf = readFileSync(join(dist, m[1]));
  startRaw += buf.length; startGz += gzipSync(buf).length;
}
console.log(`  start-up (index.html's entry script + css): ${kb(startRaw)}, gzip ${kb(startGz)}`);
