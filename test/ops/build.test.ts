import assert from 'node:assert/strict';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helper.js';
import { ROOT } from '../process.js';
import { assertServesEverything, runOk, startServing } from './installed.js';

const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const BIN = path.join(ROOT, 'bin', 'openalerts.js');

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

// `npm run build` rewrites the checkout's dist/ (as `npm start` and `npm ci` do) from the same
// sources the CLI tests' dist/ was built from (test/process.ts): they run the same code after it.
test('the build bundles the service into dist/chunks/ beside a copy of every other file under src/', async () => {
  await runOk(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT });
  const built = new Set(filesUnder(DIST));
  for (const file of filesUnder(SRC).filter((f) => !f.endsWith('.ts'))) {
    assert.ok(built.has(file), `dist/${file} is missing (from src/${file})`);
    assert.ok(fs.readFileSync(path.join(DIST, file)).equals(fs.readFileSync(path.join(SRC, file))), `dist/${file} differs from src/${file}`);
  }
  assert.ok(built.has('cli.js') && built.has('chunks/cli.js'), 'dist/cli.js loads the bundled entry dist/chunks/cli.js');
  assert.deepEqual([...built].filter((f) => f.endsWith('.ts')), [], 'no TypeScript in dist/');
  // What the chunks still import from node_modules is the short list the build keeps external;
  // everything else (fastify, kysely, typebox, ajv, qs, ...) is inside the bundle.
  const external = new Set(['better-sqlite3', 'pino', 'pino-pretty', '@fastify/swagger-ui', 'centrifuge', 'esbuild', 'pg', 'ioredis', '@fastify/cookie']);
  const imported = new Set<string>();
  for (const file of [...built].filter((f) => f.startsWith('chunks/') && f.endsWith('.js'))) {
    // esbuild writes static imports as whole lines at the top of a chunk and dynamic ones as import("…").
    for (const m of fs.readFileSync(path.join(DIST, file), 'utf8').matchAll(/^import (?:[^;\n]* from )?"([^"]+)";$|\bimport\("([^"]+)"\)/gm)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      imported.add(spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/'));
    }
  }
  assert.deepEqual([...imported].filter((name) => !external.has(name)), [], 'only the external packages are imported from node_modules');
  // The bundled packages' licences travel with them.
  const notices = fs.readFileSync(path.join(DIST, 'THIRD-PARTY-NOTICES.txt'), 'utf8');
  for (const name of ['fastify', 'kysely', 'typebox', 'ajv', 'qs']) assert.match(notices, new RegExp(`^${name}@\\d`, 'm'), `${name}'s licence is in dist/THIRD-PARTY-NOTICES.txt`);
  assert.equal(fs.statSync(DIST).mode & 0o777, 0o755, 'dist/ is readable by the user the service runs as');
  assert.deepEqual(
    fs.readdirSync(ROOT).filter((f) => f.startsWith('.dist-')),
    [],
    'the staging folder is gone',
  );
});

test('bin/openalerts.js runs the build: --help, a command, and serve with every file it reads', async () => {
  const help = await runOk(process.execPath, [BIN, '--help'], { cwd: ROOT });
  assert.match(help.stdout, /Usage: openalerts/);
  assert.match(help.stdout, /serve/);

  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined };
  await runOk(process.execPath, [BIN, 'migrate'], { cwd: ROOT, env });
  const server = await startServing(process.execPath, [BIN, 'serve'], { cwd: ROOT, env });
  try {
    await assertServesEverything(server.url);
  } finally {
    assert.equal(await server.stop(), 0, `SIGTERM shuts down cleanly:\n${server.output()}`);
  }
});

test('npm pack ships bin/ and dist/ (with its static files), and no sources, tests or benchmarks', async () => {
  // --ignore-scripts: list what the dist/ built above would ship (pack itself rebuilds through `prepare`).
  const res = await runOk('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, env: { npm_config_loglevel: 'error' } });
  const files = (JSON.parse(res.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
  for (const wanted of ['package.json', 'README.md', 'bin/openalerts.js', 'dist/cli.js', 'dist/chunks/cli.js', 'dist/THIRD-PARTY-NOTICES.txt', 'dist/web/static/app.css']) {
    assert.ok(files.includes(wanted), `${wanted} is in the package`);
  }
  const stray = files.filter((f) => !/^(bin|dist)\//.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f));
  assert.deepEqual(stray, [], 'only bin/, dist/, package.json, README and LICENSE are shipped');
  assert.deepEqual(files.filter((f) => /(^|\/)(test|bench)(\/|$)|\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts')), [], 'no tests, benchmarks or TypeScript sources');
});
