#!/usr/bin/env node
// Builds dist/, what production runs (the tests run src/ through tsx):
//
// - every src/**/*.ts as JavaScript at the same relative path, one output file per source file,
//   so a module finds what lies beside it through import.meta.url as it does in src/;
// - every other file under src/ copied at the same relative path (static assets);
// - dist/vendor/<name>.js: one-file bundles of kysely and typebox, which our files import instead
//   of the packages. Each package is hundreds of ES modules (264 and 373 files loaded at start),
//   and loading them one by one was a quarter of the server's start-up CPU. Both are plain
//   JavaScript with no files of their own to read and no state shared with other packages, and
//   the bundle is made from the version package-lock.json installed, at every build.
//   `typebox/compile` (the validator the Merchandise API runs its schemas through) is a bundle of
//   its own, imported on first use: it is as big as the rest of typebox, and a server that gets no
//   Merchandise API request never loads it. It shares no state with `typebox` (schemas are plain
//   objects).
//
// esbuild transpiles without type checking (`npm run typecheck` does that; `isolatedModules` in
// tsconfig.json keeps every file transpilable on its own), in about a second, which is why
// `npm ci`, `npm start` and `npm pack` can all build. It is a runtime dependency so that
// `npm ci --omit=dev` in a checkout can still build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
// Package → the import paths its bundle serves (their exports must not clash).
const VENDORED = { kysely: ['kysely'], typebox: ['typebox'], 'typebox/compile': ['typebox/compile'] };
const bundleOf = (importPath) => Object.keys(VENDORED).find((name) => VENDORED[name].includes(importPath));
const common = { format: 'esm', platform: 'node', target: 'node20.19', sourcemap: 'linked', logLevel: 'warning' };

const sources = [];
const assets = [];
for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = path.join(entry.parentPath ?? entry.path, entry.name);
  if (file.endsWith('.d.ts')) continue;
  (file.endsWith('.ts') ? sources : assets).push(file);
}

/**
 * Keeps each source file a module of its own: every import stays an import (esbuild only
 * transpiles the file), except a vendored package's, which points at its bundle in dist/vendor/.
 */
function eachFileAlone(outdir) {
  return {
    name: 'each-file-alone',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return null;
        const name = bundleOf(args.path);
        if (!name) return { path: args.path, external: true };
        const builtDir = path.dirname(path.join(outdir, path.relative(src, args.importer)));
        const bundle = path.relative(builtDir, path.join(outdir, 'vendor', `${name}.js`)).split(path.sep).join('/');
        return { path: bundle.startsWith('.') ? bundle : `./${bundle}`, external: true };
      });
    },
  };
}

// Build next to dist/ and swap at the end, so an interrupted or failed build never leaves a
// half-written dist/ behind (the previous one stays until the new one is complete).
const staging = fs.mkdtempSync(path.join(root, '.dist-'));
fs.chmodSync(staging, 0o755); // mkdtemp makes it private; the service may run as another user
try {
  await esbuild.build({
    ...common,
    entryPoints: sources,
    outbase: src,
    outdir: staging,
    bundle: true,
    plugins: [eachFileAlone(staging)],
    // Linked maps with the sources inside: `node --enable-source-maps` shows TypeScript lines,
    // and an installed package (which ships no src/) can still do that.
    sourcesContent: true,
  });
  for (const [name, entries] of Object.entries(VENDORED)) {
    const hasDefault = 'default' in (await import(name));
    const contents = entries.map((entry) => `export * from '${entry}';`).join(' ') + (hasDefault ? ` export { default } from '${name}';` : '');
    await esbuild.build({
      ...common,
      stdin: { contents, resolveDir: root, sourcefile: `vendor/${name}.js` },
      bundle: true,
      // Their doc comments are most of their text: without them there is half as much to read and parse.
      minifyWhitespace: true,
      outfile: path.join(staging, 'vendor', `${name}.js`),
    });
    // Their licence (MIT) asks for the notice to travel with copies of the code.
    const pkgDir = path.join(root, 'node_modules', name.split('/')[0]);
    const license = fs.readdirSync(pkgDir).find((f) => /^licen[cs]e(\.|$)/i.test(f));
    if (!license) throw new Error(`no licence file in ${pkgDir}`);
    fs.copyFileSync(path.join(pkgDir, license), path.join(staging, 'vendor', `${name}.LICENSE`));
  }
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
