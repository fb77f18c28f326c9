import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What dist/ is built from: a change to any of these makes the build stale. */
const BUILD_INPUTS = ['src', 'scripts/build.js', 'package-lock.json'];
/** The hash of BUILD_INPUTS that dist/ was last built from by `builtCli` (outside dist/: not shipped). */
const BUILD_STAMP = path.join(ROOT, 'node_modules', '.cache', 'openalerts-tests', 'dist-inputs.sha256');

/** A hash of the files at these paths under ROOT (folders: every file in them), for caches built from them. */
export function sourcesHash(inputs: string[]): string {
  const hash = createHash('sha256');
  for (const input of inputs) {
    const at = path.join(ROOT, input);
    const files = fs.statSync(at).isDirectory()
      ? fs.readdirSync(at, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name)).sort()
      : [at];
    for (const file of files) hash.update(`${path.relative(ROOT, file)}\0`).update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/**
 * Holds a lock file while `fn` runs, so that test processes of one checkout never build dist/ at
 * the same time; a lock left by a process that died is taken over.
 */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = `${BUILD_STAMP}.lock`;
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lock, 'utf8'));
      let alive = holder > 0;
      try {
        if (alive) process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive) fs.rmSync(lock, { force: true });
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

let cli: Promise<string[]> | undefined;
/**
 * `openalerts` as the tests run it: dist/cli.js, what bin/openalerts.js runs in production, rebuilt
 * first whenever src/, the build script or the lockfile changed since it was built here, so a test
 * never exercises a stale build (and `npm test` needs no `npm run build` before it). Not src/cli.ts
 * through tsx: that loaded every package file by file through tsx's hooks, about 2.2 s of CPU per
 * `serve` start against 0.45 s for the bundle, and a run starts over a hundred such processes.
 */
export function builtCli(): Promise<string[]> {
  cli ??= withBuildLock(async () => {
    const inputs = sourcesHash(BUILD_INPUTS);
    const stamp = fs.existsSync(BUILD_STAMP) ? fs.readFileSync(BUILD_STAMP, 'utf8') : '';
    if (stamp !== inputs || !fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) {
      const build = await run(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT });
      if (build.code !== 0) throw new Error(`scripts/build.js failed (${build.code}):\n${build.stderr}`);
      fs.writeFileSync(BUILD_STAMP, inputs);
    }
    return [path.join(ROOT, 'dist', 'cli.js')];
  });
  return cli;
}

/**
 * A port for a server a test starts — and may restart on the same port — picked at random below
 * the kernel's ephemeral range: inside it, any socket on the machine (a connection to PostgreSQL,
 * another suite's server listening on port 0) may take the port between this check and the
 * server's listen, or while the server is down for a restart. Below it, only another explicit
 * choice can, which startServerProcess detects.
 */
export async function freePort(): Promise<number> {
  const first = ephemeralPorts()[0];
  if (first > OWN_PORTS_FROM + 1000) {
    for (let i = 0; i < 50; i++) {
      const port = OWN_PORTS_FROM + Math.floor(Math.random() * (first - OWN_PORTS_FROM));
      if ((await listenOn(port)) !== null) return port;
    }
  }
  const port = await listenOn(0);
  if (port === null) throw new Error('no free port on 127.0.0.1');
  return port;
}

const OWN_PORTS_FROM = 20_000;

/** The kernel's range for ports nobody asked for (Linux; its default elsewhere). */
function ephemeralPorts(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low! > 0 && high! >= low!) return [low!, high!];
  } catch {
    // not Linux
  }
  return [49152, 65535];
}

/** Listens on 127.0.0.1:`port` and closes again: the port it got, or null when it is taken. */
function listenOn(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const { port: got } = server.address() as net.AddressInfo;
      server.close(() => resolve(got));
    });
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; `env` is added to a copy of this environment. */
export function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * How to run `script` (a .ts path under ROOT) in a child process: its compiled counterpart when
 * this process runs compiled by scripts/test.js (`npm test`, which sets OPENALERTS_TEST_COMPILED to
 * the compiled tree), else the source through tsx.
 */
export function scriptArgs(script: string): string[] {
  const compiled = process.env.OPENALERTS_TEST_COMPILED;
  if (compiled) return ['--enable-source-maps', path.join(compiled, path.relative(ROOT, path.resolve(ROOT, script)).replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', path.resolve(ROOT, script)];
}

/**
 * Runs a test script (a server built in a child process that reports on stdout) with only PATH,
 * a loopback listen address and `env` — nothing of this process's environment (DATABASE_URL,
 * REDIS_URL) — and returns its JSON report; a non-zero exit rejects with its stderr.
 */
export async function runJsonScript<T>(script: string, env: Record<string, string>): Promise<T> {
  const { code, stdout, stderr } = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, scriptArgs(script), {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
  });
  if (code !== 0) throw new Error(`${script} exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as T;
}

/** Runs `openalerts <args>` as a user would, with the given environment. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return run(process.execPath, [...(await builtCli()), ...args], { cwd: ROOT, env: { LOG_LEVEL: 'warn', ...env } });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How many worker processes `startServerProcess` asks for when the caller does not say:
 * OPENALERTS_TEST_WORKERS=2 runs every process-based test against `serve --workers 2`
 * (test/e2e/workers-conformance.test.ts sets it for the real-time end-to-end cases).
 */
export function defaultTestWorkers(): number {
  const n = Number(process.env.OPENALERTS_TEST_WORKERS ?? '1');
  return Number.isInteger(n) && n > 1 ? n : 1;
}

/**
 * Starts `openalerts serve` on a free port (or `env.PORT`: a restart on the same one) and waits until
 * it says it listens and /healthz answers. Only the child's own word counts: another process may
 * hold the port (it then fails to listen and exits), and its /healthz would answer for it — a test
 * then talked to a stranger (seen in CI: a token issued for this server refused with a 401). A
 * port this function picked is picked again if taken; a given one fails the start.
 * `workers` > 1 runs it as `serve --workers <n>` (its workers start more slowly: each loads the app).
 */
export async function startServerProcess(env: Record<string, string>, timeoutMs?: number, workers = defaultTestWorkers()): Promise<ServerProcess> {
  // Bounds, not expectations: a start is CPU-bound (a quiet machine ~1 s; under CI's load 15–20 on
  // 2 CPUs, 15 s and more was seen), and a server that exits fails at once anyway.
  timeoutMs ??= workers > 1 ? 120_000 : 60_000;
  const cli = await builtCli();
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const port = env.PORT ? Number(env.PORT) : await freePort();
    const child = spawn(process.execPath, [...cli, 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const url = `http://127.0.0.1:${port}`;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Printed once it listens (server.ts, cluster/primary.ts: with workers, once all of them do).
    const listening = workers === 1 ? 'OpenAlerts is running' : 'worker processes on port';
    const started = async (): Promise<boolean> => {
      for (;;) {
        if (child.exitCode !== null) {
          // All of its output, for the reason (stderr may still hold some after the exit).
          await Promise.race([new Promise((r) => child.stderr!.once('close', r)), new Promise((r) => setTimeout(r, 10_000))]);
          if (!env.PORT && attempt < 5 && output.includes('EADDRINUSE')) return false;
          throw new Error(`server exited with ${child.exitCode}:\n${output}`);
        }
        if (output.includes(listening)) {
          try {
            if ((await fetch(`${url}/healthz`)).ok) return true;
          } catch {
            // not answering yet
          }
        }
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`server did not listen and answer /healthz within ${timeoutMs} ms:\n${output}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    if (!(await started())) continue;
    return {
      url,
      child,
      output: () => output,
      async stop(signal = 'SIGTERM') {
        if (child.exitCode === null) child.kill(signal);
        return exited;
      },
    };
  }
}

/**
 * The worker processes of a `serve --workers N` primary: its children running the same executable
 * (node:cluster forks each worker from the primary's). Not every child is a worker: tsx starts an
 * esbuild service process under the primary whenever it compiles a file missing from its cache (the
 * first run after a change), and counting it made "both workers" assertions fail and `kill -9` hit
 * it. A killed worker stays listed (a zombie keeps its name) until the primary has reaped it.
 */
export function workerPids(primary: ChildProcess): number[] {
  const own = processName(primary.pid!);
  if (own === null) return [];
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((pid) => pid > 0);
  } catch {
    return []; // ps exits 1 when there are none
  }
  return children.filter((pid) => processName(pid) === own);
}

function processName(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8');
  } catch {
    return null; // exited
  }
}
