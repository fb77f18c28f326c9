import assert from 'node:assert/strict';
import fs from 'node:fs';
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

// `npm run build` rewrites the checkout's dist/ (as `npm start` and `npm ci` do); the CLI tests
// run src/ and are not affected.
test('the build turns every source into JavaScript beside a copy of every other file under src/', async () => {
  await runOk(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT });
  const built = new Set(filesUnder(DIST));
  for (const file of filesUnder(SRC)) {
    const expected = file.endsWith('.ts') ? file.replace(/\.ts$/, '.js') : file;
    assert.ok(built.has(expected), `dist/${expected} is missing (from src/${file})`);
    if (!file.endsWith('.ts')) assert.ok(fs.readFileSync(path.join(DIST, file)).equals(fs.readFileSync(path.join(SRC, file))), `dist/${file} differs from src/${file}`);
  }
  assert.deepEqual([...built].filter((f) => f.endsWith('.ts')), [], 'no TypeScript in dist/');
  // kysely and typebox load as one bundle each (dist/vendor/), never module by module.
  for (const name of ['kysely', 'typebox']) assert.ok(built.has(`vendor/${name}.js`) && built.has(`vendor/${name}.LICENSE`), `dist/vendor/${name}.js and its licence`);
  const bare = [...built].filter((f) => f.endsWith('.js') && !f.startsWith('vendor/') && /from\s*["'](kysely|typebox)["']/.test(fs.readFileSync(path.join(DIST, f), 'utf8')));
  assert.deepEqual(bare, [], 'built files import the vendored bundles, not the packages');
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
  for (const wanted of ['package.json', 'README.md', 'bin/openalerts.js', 'dist/cli.js', 'dist/server.js', 'dist/web/static/app.css', 'dist/db/migrations/index.js']) {
    assert.ok(files.includes(wanted), `${wanted} is in the package`);
  }
  const stray = files.filter((f) => !/^(bin|dist)\//.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f));
  assert.deepEqual(stray, [], 'only bin/, dist/, package.json, README and LICENSE are shipped');
  assert.deepEqual(files.filter((f) => /(^|\/)(test|bench)(\/|$)|\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts')), [], 'no tests, benchmarks or TypeScript sources');
});
