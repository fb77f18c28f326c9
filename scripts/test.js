#!/usr/bin/env node
// `npm test`: compiles test/ and src/ to JavaScript once, then runs `node --test` over the compiled
// test files, each in its own process as before.
//
// Why: run through tsx (`node --import tsx`), every module a test process loads — its own files,
// src/ and every package file — goes through tsx's loader hooks, about 0.8 s of CPU more per test
// process that builds the app (1.8 s instead of 0.95 s), and `npm test` starts 149 of them on each
// Node. esbuild (a dependency already: scripts/build.js) transpiles the ~540 files in about a second.
//
// The compiled tree is node_modules/.cache/openalerts-tests/js-<hash>/, named by a hash of its
// inputs (and of the checkout's path, which the tree names), so a change to any file compiles
// afresh and a run never uses stale code. esbuild bundles it with code splitting: every test file
// and every module a test starts as a process or a thread (isEntry below) is an entry at its own
// relative path (test/a/b.test.ts → test/a/b.test.js), and the code they share — src/, the test
// helpers and most packages (NOT_BUNDLED below) — lands in chunks/, each module in exactly one
// chunk, so a process holds one copy of it (singletons and `instanceof` across test and src/ hold
// as under tsx). A process that built the app loaded about 240 of our modules and 400 package files
// one by one; now about 100 chunks and 150 package files. Linked source maps point at the .ts files
// (`--enable-source-maps` reports TypeScript lines).
// Each `import.meta.url` is rewritten to the URL of the .ts file it was compiled from: a module
// finds what lies beside it (fixtures, static assets, ROOT in test/process.ts) where it does under
// tsx. The test processes get the tree's path in OPENALERTS_TEST_COMPILED: the helper processes
// they start (test/other-process.ts, runJsonScript in test/process.ts) run the compiled scripts,
// and worker threads (src/worker-entry.ts) their compiled entries, not the .ts through tsx (about
// 1 s of CPU each).
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
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INPUTS = ['src', 'test'];
// Packages not bundled into the compiled tree, loaded from node_modules as installed:
// - what scripts/build.js leaves out of dist/ for the service: native packages and those that read
//   their own files at run time (better-sqlite3, pino and its transports, Swagger UI's assets, the
//   centrifuge client we serve, esbuild), the PostgreSQL and Redis drivers, and @fastify/cookie
//   (imports a CommonJS package for its named exports, which a bundle cannot give);
// - the packages test/ops/lazy-deps.test.ts finds loaded or not (it reads require.cache, where a
//   bundled package never appears), with the schema compilers, qs and light-my-request that src/
//   and Fastify `require` on first use;
// - the test tools: the browser driver, tsx, TypeScript, autocannon and the centrifuge2 client.
// Every other package is bundled (fastify and its plugins, kysely, typebox, jose, semver …): with
// splitting, once per process however many test and src/ modules import it.
const NOT_BUNDLED = new Set([
  ...['better-sqlite3', 'pino', 'pino-pretty', '@fastify/swagger-ui', 'centrifuge', 'esbuild', 'pg', 'ioredis', '@fastify/cookie'],
  ...['prom-client', '@fastify/swagger', 'yaml', 'fast-jwt', 'ws', 'confusables', 'linkify-it', 'tlds', 'ajv', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'qs', 'light-my-request'],
  ...['playwright-core', 'tsx', 'typescript', 'autocannon', 'centrifuge2'],
]);
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
/**
 * The modules a process starts from, each an entry of the bundle at its own path in the tree: test
 * files, the scripts tests run in child processes (*.script.ts, test/other-process.worker.ts;
 * test/process.ts `scriptArgs`) and the worker threads' modules (src/worker-entry.ts).
 */
const isEntry = (file) => /^test\/.*\.(test|script)\.ts$/.test(file) || file === 'test/other-process.worker.ts' || /^src\/.*\.worker\.ts$/.test(file);
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
  hash.update(`${root}\0${process.versions.node}\0${esbuild.version}\0`);
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
          return { contents: text.replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
        });
      },
    };
    const externals = {
      name: 'externals',
      setup(build) {
        build.onResolve({ filter: /^[^./]/ }, (args) => (NOT_BUNDLED.has(packageOf(args.path)) ? { path: args.path, external: true } : undefined));
      },
    };
    const result = await esbuild.build({
      entryPoints: files.filter(isEntry).map((f) => path.join(root, f)),
      outdir: staging,
      outbase: root,
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      // As tsx compiles: for the Node that runs it.
      target: `node${process.versions.node}`,
      tsconfig: path.join(root, 'tsconfig.json'),
      plugins: [externals, rewriteMetaUrl],
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      // Linked maps pointing at the .ts files (no copy of the sources inside).
      sourcemap: 'linked',
      sourcesContent: false,
      metafile: true,
      logLevel: 'warning',
    });
    // As in scripts/build.js: a CommonJS package that is the target of import() would become a chunk
    // whose only export is `default`, where Node gives its named exports too.
    const cjsImported = Object.values(result.metafile.outputs).filter((out) => out.entryPoint?.includes('node_modules/') && out.exports.length === 1 && out.exports[0] === 'default');
    if (cjsImported.length > 0) throw new Error(`a CommonJS package is loaded with import(): add it to NOT_BUNDLED in scripts/test.js (${cjsImported.map((out) => out.entryPoint).join(', ')})`);
    // A test file that runs another's tests after setting something up (test/workers-switch.ts) must
    // import it with `await import()`: esbuild does not keep the order of static imports whose code
    // lands in different chunks, so the other file's tests could be defined before the set-up ran.
    for (const [input, { imports }] of Object.entries(result.metafile.inputs)) {
      const other = imports.find((i) => i.kind === 'import-statement' && i.path.endsWith('.test.ts'));
      if (other) throw new Error(`${input} imports ${other.path} statically: use \`await import()\` (see scripts/test.js)`);
    }
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
