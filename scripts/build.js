#!/usr/bin/env node
// Builds dist/: src/ as plain JavaScript, one output file per source file at the same relative path,
// plus every other file under src/ copied as it is (static assets and anything else a module finds
// next to itself through import.meta.url). Production runs dist/; the tests run src/ through tsx.
//
// esbuild transpiles each file on its own (no type check: `npm run typecheck` does that), in well
// under a second, which is why `npm ci`, `npm start` and `npm pack` can all build. It is a runtime
// dependency only so that `npm ci --omit=dev` in a checkout can still build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

const sources = [];
const assets = [];
for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = path.join(entry.parentPath ?? entry.path, entry.name);
  if (file.endsWith('.d.ts')) continue;
  (file.endsWith('.ts') ? sources : assets).push(file);
}

// Build next to dist/ and swap at the end, so an interrupted or failed build never leaves a
// half-written dist/ behind (the previous one stays until the new one is complete).
const staging = fs.mkdtempSync(path.join(root, '.dist-'));
try {
  await esbuild.build({
    entryPoints: sources,
    outbase: src,
    outdir: staging,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    // Linked maps with the sources inside: `node --enable-source-maps` shows TypeScript lines,
    // and an installed package (which ships no src/) can still do that.
    sourcemap: 'linked',
    sourcesContent: true,
    logLevel: 'warning',
  });
  for (const file of assets) {
    const to = path.join(staging, path.relative(src, file));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(file, to);
  }
  const old = `${staging}-old`;
  if (fs.existsSync(dist)) fs.renameSync(dist, old);
  fs.renameSync(staging, dist);
  fs.rmSync(old, { recursive: true, force: true });
} catch (err) {
  fs.rmSync(staging, { recursive: true, force: true });
  throw err;
}
