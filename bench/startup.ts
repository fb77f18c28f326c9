/**
 * Start-up benchmark (issue 10): how long until a freshly started process is useful, for
 *
 * - `serve`      `openalerts serve` (bin/openalerts.js → dist/, NODE_ENV=production) on an existing
 *                SQLite database: spawn → first `/healthz` 200;
 * - `serve-dev`  the same without NODE_ENV (what `npm start` runs: pretty logs through pino-pretty);
 * - `bare`       `node -e` starting a bare Fastify with one `/healthz` route: spawn → first 200;
 * - `help`       `openalerts --help`: spawn → exit;
 * - `user-show`  `openalerts user show <email>` on that database: spawn → exit;
 * - `node`       `node -e 0`, the floor every side pays.
 *
 *
 * It builds dist/ first (scripts/build.js). Sides alternate round by round, rotating the order, so
 * each sees the same machine; it reports per side the median, fastest and slowest wall time, the
 * CPU time the process used (user + system, from /proc: less sensitive to other load than wall
 * time; servers only) and its resident memory when ready, the serve/bare ratios (wall per round,
 * CPU), and the load average before and after.
 *
 * Then the weight of an idle server (issue 16): `serve` and `bare` alternate for --rss-rounds
 * rounds (default 3); each is started, left idle for --idle-seconds (default 5) after its first
 * `/healthz` 200 (timers, the relay's rounds and V8's idle-time collection run meanwhile), and its
 * RSS read from /proc.
 *
 * Targets: serve ≤ 2 × bare and ≤ 500 ms; help and user-show ≤ 300 ms (quiet machine); idle serve
 * on SQLite ≤ 90 MiB RSS.
 *
 * With --before=DIR (an older checkout with its dist/ built and node_modules, e.g. `git archive
 * <commit> | tar -x -C DIR`, a node_modules symlink and `node DIR/scripts/build.js`), its `serve`
 * is one more side, `serve-before`, on a database of its own, in both parts.
 *
 *   node --import tsx bench/startup.ts [--rounds=15] [--rss-rounds=3] [--idle-seconds=5] [--before=DIR]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternateRounds, median, numberArg, printReport } from './lib.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'openalerts.js');
const EMAIL = 'startup-bench@example.com';
const BARE_FASTIFY = "require('fastify')().get('/healthz', async () => ({ status: 'ok' })).listen({ port: Number(process.env.PORT), host: '127.0.0.1' })";

type Side = 'serve' | 'serve-before' | 'serve-dev' | 'bare' | 'help' | 'user-show' | 'node';
interface Sample {
  ms: number;
  cpuMs: number | null;
  /** Resident memory when ready (servers only). */
  rssMiB: number | null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One GET without keep-alive: true on 200, false while nothing listens yet. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

/** User + system CPU time of a live process, from /proc (null where there is none). */
function cpuMs(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms (USER_HZ)
  } catch {
    return null;
  }
}

/** Resident set size of a live process in MiB, from /proc (null where there is none). */
function rssMiB(pid: number): number | null {
  try {
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kib ? Number(kib[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Spawns a server, polls /healthz every 2 ms, stops it once it answers 200 — or, with `idleMs`,
 * that long after (the RSS is then read after the idle time).
 */
async function untilHealthy(args: string[], env: Record<string, string | undefined>, idleMs = 0): Promise<Sample> {
  const port = await freePort();
  const start = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  while (!(await healthy(port))) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode} before answering /healthz`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - start;
  const cpu = cpuMs(child.pid!);
  if (idleMs > 0) await new Promise((r) => setTimeout(r, idleMs));
  const rss = rssMiB(child.pid!);
  child.kill('SIGKILL');
  await exited;
  return { ms, cpuMs: cpu, rssMiB: rss };
}

/** Spawns a command and waits for it to exit 0 (no CPU figure: the process is gone by then). */
async function untilExit(args: string[], env: Record<string, string | undefined>): Promise<Sample> {
  const start = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${stderr}`);
  return { ms, cpuMs: null, rssMiB: null };
}

async function main(): Promise<void> {
  const rounds = numberArg('rounds', 15);
  const rssRounds = numberArg('rss-rounds', 3);
  const idleSeconds = numberArg('idle-seconds', 5);
  const build = spawn(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, stdio: 'inherit' });
  if ((await new Promise((r) => build.once('exit', r))) !== 0) throw new Error('build failed');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-startup-'));
  // An existing database: migrated, one account, the secret key written.
  const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined, LOG_LEVEL: 'info', NODE_ENV: 'production' };
  await untilExit([BIN, 'user', 'create', '--email', EMAIL, '--password', 'startup bench passphrase', '--name', 'Startup Bench'], env);
  const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  const beforeBin = before ? path.join(path.resolve(before), 'bin', 'openalerts.js') : null;
  const beforeDataDir = before ? fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-startup-before-')) : null;
  const beforeEnv = { ...env, DATA_DIR: beforeDataDir ?? undefined };
  if (beforeBin) await untilExit([beforeBin, 'user', 'create', '--email', EMAIL, '--password', 'startup bench passphrase', '--name', 'Startup Bench'], beforeEnv);

  const sides: Partial<Record<Side, () => Promise<Sample>>> = {
    serve: () => untilHealthy([BIN, 'serve'], env),
    ...(beforeBin ? { 'serve-before': () => untilHealthy([beforeBin, 'serve'], beforeEnv) } : {}),
    'serve-dev': () => untilHealthy([BIN, 'serve'], { ...env, NODE_ENV: undefined }),
    bare: () => untilHealthy(['-e', BARE_FASTIFY], {}),
    help: () => untilExit([BIN, '--help'], env),
    'user-show': () => untilExit([BIN, 'user', 'show', EMAIL], env),
    node: () => untilExit(['-e', '0'], {}),
  };
  const names = Object.keys(sides) as Side[];
  for (const side of names) await sides[side]!(); // warm-up: file cache, compile cache (Node ≥ 22)

  const loadBefore = os.loadavg();
  const samples = await alternateRounds(rounds, names, (side) => sides[side]!(), { rotate: true });
  const idleSides: Partial<Record<Side, () => Promise<Sample>>> = {
    serve: () => untilHealthy([BIN, 'serve'], env, idleSeconds * 1000),
    ...(beforeBin ? { 'serve-before': () => untilHealthy([beforeBin, 'serve'], beforeEnv, idleSeconds * 1000) } : {}),
    bare: () => untilHealthy(['-e', BARE_FASTIFY], {}, idleSeconds * 1000),
  };
  const idleNames = Object.keys(idleSides) as Side[];
  const idle = await alternateRounds(rssRounds, idleNames, (side) => idleSides[side]!(), { rotate: true });
  const loadAfter = os.loadavg();
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (beforeDataDir) fs.rmSync(beforeDataDir, { recursive: true, force: true });

  const ms = (xs: number[]) => Math.round(xs.reduce((a, b) => Math.min(a, b)));
  const summary = Object.fromEntries(
    names.map((side) => {
      const wall = samples[side].map((s) => s.ms);
      const cpu = samples[side].map((s) => s.cpuMs).filter((c): c is number => c !== null);
      const rss = samples[side].map((s) => s.rssMiB).filter((r): r is number => r !== null);
      return [
        side,
        { median_ms: Math.round(median(wall)), fastest_ms: ms(wall), slowest_ms: Math.round(Math.max(...wall)), cpu_median_ms: cpu.length ? Math.round(median(cpu)) : null, ...(rss.length ? { rss_when_ready_mib: Math.round(median(rss)) } : {}) },
      ];
    }),
  );
  const perRound = samples.serve.map((s, i) => Number((s.ms / samples.bare[i]!.ms).toFixed(2)));
  printReport('start-up: openalerts serve (first /healthz 200, existing SQLite database) vs bare Fastify; --help and user show (to exit)', {
    rounds,
    load_average_before: loadBefore.map((l) => Number(l.toFixed(2))),
    load_average_after: loadAfter.map((l) => Number(l.toFixed(2))),
    ...summary,
    ratio_serve_to_bare: Number((median(samples.serve.map((s) => s.ms)) / median(samples.bare.map((s) => s.ms))).toFixed(2)),
    ratio_serve_to_bare_per_round: perRound,
    ratio_serve_to_bare_cpu: Number((median(samples.serve.map((s) => s.cpuMs!)) / median(samples.bare.map((s) => s.cpuMs!))).toFixed(2)),
    ...(beforeBin
      ? {
          ratio_serve_to_serve_before: Number((median(samples.serve.map((s) => s.ms)) / median(samples['serve-before'].map((s) => s.ms))).toFixed(2)),
          ratio_serve_to_serve_before_cpu: Number((median(samples.serve.map((s) => s.cpuMs!)) / median(samples['serve-before'].map((s) => s.cpuMs!))).toFixed(2)),
        }
      : {}),
    [`idle_rss_mib_after_${idleSeconds}s`]: { rounds: rssRounds, ...Object.fromEntries(idleNames.map((side) => [side, idle[side].map((s) => Math.round(s.rssMiB!))])) },
    targets: { serve_to_bare: '≤ 2', serve_ms: '≤ 500', help_ms: '≤ 300', user_show_ms: '≤ 300', idle_serve_rss_mib: '≤ 90' },
  });
}

await main();
