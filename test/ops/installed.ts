/**
 * What the build and install checks share: running `openalerts` the way an installed copy runs
 * (the JavaScript in dist/, through bin/openalerts.js or the package's bin link), and checking that
 * a started server serves what needs files beside the code.
 */
import assert from 'node:assert/strict';
import { spawn, type SpawnOptions } from 'node:child_process';
import { freePort, run, type CliResult } from '../process.js';

export type Run = CliResult;

/** `run`, failing with the command's output unless it exits 0. */
export async function runOk(command: string, args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<Run> {
  const res = await run(command, args, options);
  assert.equal(res.code, 0, `${command} ${args.join(' ')} exited ${res.code}:\n${res.stdout}\n${res.stderr}`);
  return res;
}

export interface Served {
  url: string;
  output(): string;
  stop(): Promise<number | null>;
}

/** Starts `command args` (a `serve`) on a free port and waits for the first /healthz 200. */
export async function startServing(command: string, args: string[], options: SpawnOptions & { cwd: string; env: Record<string, string | undefined> }, timeoutMs = 120_000): Promise<Served> {
  const port = await freePort();
  const child = spawn(command, args, {
    ...options,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      options.detached ? process.kill(-child.pid!, 'SIGKILL') : child.kill('SIGKILL');
      throw new Error(`${command} ${args.join(' ')} did not answer /healthz within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    async stop() {
      // A detached child leads its own process group: the signal reaches the server under npx too.
      if (child.exitCode === null) options.detached ? process.kill(-child.pid!, 'SIGTERM') : child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * A served instance answers what reads files at run time: our static assets (copied into dist/),
 * the centrifuge browser bundle (a runtime dependency), the pages and the API documentation.
 */
export async function assertServesEverything(url: string): Promise<void> {
  for (const [pathname, type] of [
    ['/static/app.css', 'text/css'],
    ['/static/widget-alerts.js', 'text/javascript'],
    ['/static/alert-default.svg', 'image/svg+xml'],
    ['/favicon.ico', 'image/'],
    ['/static/vendor/centrifuge.js', 'text/javascript'],
    ['/login', 'text/html'],
    ['/openapi.json', 'application/json'],
    ['/docs/static/index.html', 'text/html'],
  ] as const) {
    const res = await fetch(url + pathname);
    assert.equal(res.status, 200, `GET ${pathname}`);
    assert.ok(res.headers.get('content-type')?.startsWith(type), `GET ${pathname}: ${res.headers.get('content-type')}`);
    assert.ok((await res.arrayBuffer()).byteLength > 0, `GET ${pathname} has a body`);
  }
}
