import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * `openalerts` as the tests run it: the TypeScript sources through tsx, so a test never exercises
 * a stale dist/ build. bin/openalerts.js runs dist/; test/ops/install.test.ts covers that path.
 */
export const CLI = ['--import', 'tsx', path.join(ROOT, 'src', 'cli.ts')];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
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
 * Runs a test script (a server built in a child process that reports on stdout) with only PATH,
 * a loopback listen address and `env` — nothing of this process's environment (DATABASE_URL,
 * REDIS_URL) — and returns its JSON report; a non-zero exit rejects with its stderr.
 */
export async function runJsonScript<T>(script: string, env: Record<string, string>): Promise<T> {
  const { code, stdout, stderr } = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
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
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return run(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { LOG_LEVEL: 'warn', ...env } });
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
 * Starts `openalerts serve` on a free port (or `env.PORT`: a restart on the same one) and waits until /healthz answers.
 * `workers` > 1 runs it as `serve --workers <n>` (its workers start more slowly: each loads the app).
 */
export async function startServerProcess(env: Record<string, string>, timeoutMs?: number, workers = defaultTestWorkers()): Promise<ServerProcess> {
  timeoutMs ??= workers > 1 ? 60_000 : 20_000;
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [...CLI, 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      // With workers, the first one listening answers before the others are up: wait for all.
      if (res.ok && (workers === 1 || output.includes('worker processes on port'))) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer /healthz within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
