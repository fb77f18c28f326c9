/**
 * Installs as users install, from a clean copy of this checkout (the files git tracks, plus new
 * files not ignored — what a commit would hold, as the working tree has them):
 *
 * 1. `npm ci --omit=dev`, then `npx openalerts serve` in that copy: the `prepare` build runs with
 *    runtime dependencies only, and no TypeScript tooling is installed.
 * 2. `npm pack` there, then `npx <tarball> serve` from an empty folder: the package carries its own
 *    build and runs without ever running a script of ours.
 *
 * Each install compiles better-sqlite3 (about a minute of CPU), so this is not part of `npm test`:
 * `npm run test:install` runs it, and .ci/run runs it once per CI run. Packages come from the npm
 * cache where they are there, else from the registry.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { tempDir } from '../helper.js';
import { ROOT } from '../process.js';
import { assertServesEverything, runOk, startServing } from './installed.js';

const INSTALL_TIMEOUT = 20 * 60_000;
const npmQuiet = { npm_config_loglevel: 'error', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };

let work: string;
let copy: string;

before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-install-'));
  copy = path.join(work, 'checkout');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    fs.copyFileSync(from, path.join(copy, file));
  }
  assert.ok(!fs.existsSync(path.join(copy, 'node_modules')) && !fs.existsSync(path.join(copy, 'dist')), 'the copy starts without node_modules/ and dist/');
});

after(() => fs.rmSync(work, { recursive: true, force: true }));

test('npm ci --omit=dev in a clean copy, then `npx openalerts serve`', { timeout: INSTALL_TIMEOUT }, async () => {
  await runOk('npm', ['ci', '--omit=dev'], { cwd: copy, env: npmQuiet });
  for (const devOnly of ['typescript', 'tsx', 'playwright-core', 'autocannon']) {
    assert.ok(!fs.existsSync(path.join(copy, 'node_modules', devOnly)), `${devOnly} is not installed with --omit=dev`);
  }
  assert.ok(fs.existsSync(path.join(copy, 'dist', 'cli.js')), 'npm ci built dist/ through `prepare`');

  const env = { ...npmQuiet, DATA_DIR: tempDir(), DATABASE_URL: undefined, REDIS_URL: undefined };
  const user = await runOk('npx', ['openalerts', 'user', 'create', '--email', 'installed@example.test', '--password', 'a long passphrase', '--name', 'Installed'], { cwd: copy, env });
  assert.equal(JSON.parse(user.stdout).name, 'Installed');
  const server = await startServing('npx', ['openalerts', 'serve'], { cwd: copy, env, detached: true });
  try {
    await assertServesEverything(server.url);
  } finally {
    await server.stop();
  }
});

test('npm pack, then `npx <tarball> serve` from an empty folder', { timeout: INSTALL_TIMEOUT }, async () => {
  // The copy has its runtime dependencies from the test above; pack runs `prepare` (the build) again.
  const packed = await runOk('npm', ['pack', '--json', '--pack-destination', work], { cwd: copy, env: npmQuiet });
  const tarball = path.join(work, (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string }>)[0]!.filename);
  const listed = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
  assert.ok(listed.includes('package/bin/openalerts.js') && listed.includes('package/dist/cli.js') && listed.includes('package/dist/web/static/app.css'));
  assert.deepEqual(listed.filter((f) => !/^package\/(bin|dist)\//.test(f) && !['package/package.json', 'package/README.md', 'package/LICENSE'].includes(f)), [], 'nothing but bin/, dist/ and the package files');

  // npx takes `./file.tgz` as a package (an absolute path would be taken for a command to run).
  const empty = fs.mkdtempSync(path.join(work, 'user-'));
  fs.copyFileSync(tarball, path.join(empty, path.basename(tarball)));
  const spec = `./${path.basename(tarball)}`;
  const npxCache = path.join(execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim(), '_npx');
  const npxBefore = new Set(fs.existsSync(npxCache) ? fs.readdirSync(npxCache) : []);
  const env = { ...npmQuiet, npm_config_yes: 'true', DATA_DIR: path.join(empty, 'data'), DATABASE_URL: undefined, REDIS_URL: undefined };
  try {
    const help = await runOk('npx', [spec, '--help'], { cwd: empty, env });
    assert.match(help.stdout, /Usage: openalerts/);
    const server = await startServing('npx', [spec, 'serve'], { cwd: empty, env, detached: true });
    try {
      await assertServesEverything(server.url);
    } finally {
      await server.stop();
    }
  } finally {
    // npx installed the tarball under the npm cache: leave the cache as it was.
    for (const dir of fs.existsSync(npxCache) ? fs.readdirSync(npxCache) : []) {
      if (!npxBefore.has(dir)) fs.rmSync(path.join(npxCache, dir), { recursive: true, force: true });
    }
  }
});
