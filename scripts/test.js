#!/usr/bin/env node
// `npm test`: compiles test/ and src/ to JavaScript once, then runs `node --test` over the compiled
// test files, each in its own process as before.
//
// Why: run through tsx (`node --import tsx`), every module a test process loads — its own files,
// src/ and every package file — goes through tsx's loader hooks, about 0.8 s of CPU more per test
// process that builds the app (1.8 s instead of 0.95 s), and `npm test` starts 149 of them on each
// Node. esbuild (a dependency already: scripts/build.js) transpiles the ~540 files in about a second.
//
// The compiled tree is node_modules/.cache/openalerts-tests/js-<hash>/ (test/ and src/ side by side,
// one .js per .ts, with a source map: `--enable-source-maps` reports TypeScript lines), named by a
// hash of its inputs, so a change to any file compiles afresh and a run never uses stale code.
// Each `import.meta.url` is rewritten to the URL of the .ts file it was compiled from: a module
// finds what lies beside it (fixtures, static assets, ROOT in test/process.ts) where it does under
// tsx. The test processes get the tree's path in OPENALERTS_TEST_COMPILED: the helper processes
// they start (test/other-process.ts, runJsonScript in test/process.ts) run the compiled scripts,
// not the .ts through tsx (about 1 s of CPU each); worker threads (src/worker-entry.ts) still load
// the .ts through tsx, as the rewritten import.meta.url says.
//
// kysely and typebox, ES modules of hundreds of files each, are bundled into the tree once
// (packages/<name>.js) and the compiled files import those bundles (BUNDLED_PACKAGES below).
//
// The tests stay runnable through tsx as well (`node --import tsx --test <file>`), as the two
// ways load the same code.
//
//   npm test                          every test file
//   npm test -- test/a.test.ts …      these files; options (`--x`, `--x=v` or `--x v`) go to `node --test`
//                                     (with their value after `=`: `--test-name-pattern=reconnect`)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INPUTS = ['src', 'test'];
// Packages whose ES module build is hundreds of small files: a test process spent about 0.25 s of CPU
// loading each module by module (kysely, typebox; AMD EPYC VM), against 0.03 s for one bundled file.
// Each is bundled once into the compiled tree and the compiled files import that bundle. Only our code
// imports them (no other package does), so a process holds one copy of each, as before.
const BUNDLED_PACKAGES = ['kysely', 'typebox'];
const bundledImport = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)(['"])(${BUNDLED_PACKAGES.join('|')})\\2`, 'g');
const cache = path.join(root, 'node_modules', '.cache', 'openalerts-tests');

/** Every file under the inputs, sorted, relative to root. */
function inputFiles() {
  const files = [];
  for (const dir of INPUTS) {
    for (const entry of fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts')) files.push(path.relative(root, path.join(entry.parentPath ?? entry.path, entry.name)));
    }
  }
  return files.sort();
}

/** Compiles every .ts under the inputs into the tree named by their hash (once), and returns its path. */
async function compiled() {
  const files = inputFiles();
  const hash = createHash('sha256');
  // The compiler's settings are part of what the output is made from: this script, tsconfig.json,
  // esbuild's version and the Node version the code is compiled for; and package-lock.json, for the
  // bundled packages.
  hash.update(`${process.versions.node}\0${esbuild.version}\0`);
  for (const file of [fileURLToPath(import.meta.url), path.join(root, 'tsconfig.json'), path.join(root, 'package-lock.json')]) hash.update(fs.readFileSync(file));
  for (const file of files) hash.update(`${file}\0`).update(fs.readFileSync(path.join(root, file))).update('\0');
  const dir = path.join(cache, `js-${hash.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(dir)) {
    // Marks it as in use, for the pruning below.
    const now = new Date();
    fs.utimesSync(dir, now, now);
    return dir;
  }

  fs.mkdirSync(cache, { recursive: true });
  const staging = fs.mkdtempSync(path.join(cache, 'js-building-'));
  try {
    const rewriteMetaUrl = {
      name: 'source-import-meta-url',
      setup(build) {
        build.onLoad({ filter: /\.ts$/ }, async (args) => {
          const text = await fs.promises.readFile(args.path, 'utf8');
          const other = /\bimport\.meta\.(?!url\b)\w+/.exec(text);
          if (other) throw new Error(`${path.relative(root, args.path)}: ${other[0]} is not supported by scripts/test.js; use import.meta.url`);
          // From the compiled file (same relative place under `dir`) back to its source.
          const from = path.dirname(path.join(dir, path.relative(root, args.path)));
          const toSource = path.relative(from, args.path).split(path.sep).join('/');
          // `../…` (the compiled files are all below `dir`, the bundles in dir/packages/).
          const toBundle = (name) => path.relative(from, path.join(dir, 'packages', `${name}.js`)).split(path.sep).join('/');
          const contents = text
            .replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(toSource)}, import.meta.url).href`)
            .replace(bundledImport, (_, keyword, quote, name) => `${keyword}${quote}${toBundle(name)}${quote}`);
          return { contents, loader: 'ts' };
        });
      },
    };
    const bundles = BUNDLED_PACKAGES.map((name) =>
      esbuild.build({
        stdin: { contents: `export * from '${name}';`, resolveDir: root, sourcefile: `${name}.js` },
        outfile: path.join(staging, 'packages', `${name}.js`),
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: `node${process.versions.node}`,
        logLevel: 'warning',
      }),
    );
    await esbuild.build({
      entryPoints: files.map((f) => path.join(root, f)),
      outdir: staging,
      outbase: root,
      bundle: false,
      format: 'esm',
      platform: 'node',
      // As tsx compiles: for the Node that runs it.
      target: `node${process.versions.node}`,
      tsconfig: path.join(root, 'tsconfig.json'),
      plugins: [rewriteMetaUrl],
      // Linked maps pointing at the .ts files (no copy of the sources inside).
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'warning',
      // src/ takes some CommonJS packages with `require` where it exists (the build) and falls back
      // to createRequire where it does not (ES modules under tsx, and here): nothing to warn about.
      logOverride: { 'unsupported-require-call': 'silent' },
    });
    await Promise.all(bundles);
    // Inside node_modules/ the package.json of the checkout is not looked up: say the .js are ES modules.
    fs.writeFileSync(path.join(staging, 'package.json'), '{ "type": "module" }\n');
    try {
      fs.renameSync(staging, dir);
    } catch (err) {
      // Another run compiled the same inputs meanwhile: theirs is as good.
      if (!fs.existsSync(dir)) throw err;
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  // Trees of other inputs (about 7 MB each, one per edit between runs) not used for three hours (a
  // run marks its tree as it starts; a whole suite takes well under an hour): no run still uses them.
  for (const name of fs.readdirSync(cache)) {
    const other = path.join(cache, name);
    if (name.startsWith('js-') && other !== dir && Date.now() - fs.statSync(other).mtimeMs > 3 * 3_600_000) fs.rmSync(other, { recursive: true, force: true });
  }
  return dir;
}

const args = process.argv.slice(2);
const options = [];
const named = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (!arg.startsWith('--')) named.push(arg);
  else {
    options.push(arg);
    // `--test-name-pattern foo`: the word after an option is its value, unless it is a file (a test
    // to run after a flag such as `--test-only`).
    const next = args[i + 1];
    if (!arg.includes('=') && next !== undefined && !next.startsWith('--') && !fs.existsSync(path.resolve(next))) options.push(args[++i]);
  }
}
const tests = named.length > 0 ? named.map((f) => path.relative(root, path.resolve(f))) : inputFiles().filter((f) => f.startsWith(`test${path.sep}`) && f.endsWith('.test.ts'));
const dir = await compiled();
// esbuild's service process would otherwise idle beside the whole run.
await esbuild.stop();
const child = spawn(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=1', ...options, ...tests.map((f) => path.join(dir, f.replace(/\.ts$/, '.js')))],
  // Test processes start their helper scripts (test/other-process.ts, runJsonScript) from it too.
  { cwd: root, stdio: 'inherit', env: { ...process.env, OPENALERTS_TEST_COMPILED: dir } },
);
// Passed on, and this process ends as the run did (a signal is raised again once not handled).
const forward = (signal) => child.kill(signal);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, forward);
child.on('exit', (code, signal) => {
  if (signal) {
    process.off(signal, forward);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
