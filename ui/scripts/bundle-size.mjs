#!/usr/bin/env node
// Prints the size of ui/dist (raw and gzip) per asset kind after `vite build`, so the bundle
// size is visible in every build log and can be reported. `bundleSize()` returns the same
// figures to the UI benchmarks (tests/e2e-ui/bench).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, extname, dirname, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

export const defaultDist = resolve(dirname(fileURLToPath(import.meta.url)), "../dist");

/** Sizes of a UI build: per asset kind, in total, and what a cold start downloads. */
export function bundleSize(dist = defaultDist) {
  const files = [];
  (function walk(d) {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p); else files.push(p);
    }
  })(dist);
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
  // What a cold start downloads: the entry script and stylesheet index.html names (Monaco,
  // xterm and the workers load on demand when a conversation opens).
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const startup = { js: { raw: 0, gz: 0 }, css: { raw: 0, gz: 0 } };
  for (const m of html.matchAll(/(?:src|href)="\.\/([^"]+\.(js|css))"/g)) {
    const buf = readFileSync(join(dist, m[1]));
    const s = startup[m[2]];
    s.raw += buf.length; s.gz += gzipSync(buf).length;
  }
  return { files: files.length, raw, gz, byKind, startup };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const s = bundleSize();
  console.log("\nUI bundle size (ui/dist):");
  for (const [k, e] of [...s.byKind].sort((a, b) => b[1].raw - a[1].raw)) {
    console.log(`  ${k.padEnd(8)} ${String(e.n).padStart(3)} files  ${kb(e.raw).padStart(12)}  gzip ${kb(e.gz).padStart(11)}`);
  }
  console.log(`  total    ${String(s.files).padStart(3)} files  ${kb(s.raw).padStart(12)}  gzip ${kb(s.gz).padStart(11)}`);
  const { js, css } = s.startup;
  console.log(`  start-up (index.html's entry script + css): ${kb(js.raw + css.raw)}, gzip ${kb(js.gz + css.gz)}`);
}
