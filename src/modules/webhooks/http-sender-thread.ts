import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckedRequest, CheckedSender, SendResult } from './endpoint.js';

type Answer = Omit<SendResult, 'latencyMs'>;

/** Beyond a request's own timeout, how long the main thread waits for the worker's answer. */
const GRACE_MS = 5_000;

/**
 * Sends the dispatcher's webhook requests from a worker thread (http-sender.worker.ts), so building
 * requests, TLS, socket writes and reading answers run beside the event loop that serves the API
 * instead of on it (with a spare core, requests no longer wait behind them). The main thread keeps every decision: it
 * resolves and checks the address (the SSRF guard), signs, and records; the worker gets a checked
 * address to connect to and nothing else. Started on the first request; a worker that dies fails
 * the requests it held (they are retried as any failed attempt) and the next request starts another.
 */
export class HttpSenderThread implements CheckedSender {
  #worker: Worker | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, (answer: Answer) => void>();

  send(request: CheckedRequest): Promise<Answer> {
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      // The worker ends every request within its timeout; this is for a worker that stopped answering.
      const timer = setTimeout(() => settle({ statusCode: null, error: `no answer from the delivery thread within ${request.timeoutMs + GRACE_MS} ms`, excerpt: null }), request.timeoutMs + GRACE_MS);
      timer.unref();
      const settle = (answer: Answer) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(answer);
      };
      this.#pending.set(id, settle);
      worker.postMessage({ id, request });
    });
  }

  /** Ends the thread (its kept connections with it); call when nothing is in flight. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    if (worker) await worker.terminate();
    this.#failAll('the delivery thread stopped');
  }

  #start(): Worker {
    const worker = new Worker(...workerEntry());
    // Never what keeps the process alive: the dispatcher's own timers and stop() decide that.
    worker.unref();
    worker.on('message', (m: { id: number; result: Answer }) => this.#pending.get(m.id)?.(m.result));
    const gone = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#failAll(why);
    };
    worker.on('error', (err) => gone(`the delivery thread failed: ${err.message}`));
    worker.on('exit', (code) => gone(`the delivery thread exited (${code})`));
    this.#worker = worker;
    return worker;
  }

  #failAll(error: string): void {
    for (const settle of [...this.#pending.values()]) settle({ statusCode: null, error, excerpt: null });
  }
}

/**
 * The worker's entry: in the build, its own entry chunk (scripts/build.js; this file's
 * `import.meta.url` is dist/modules/webhooks/http-sender-thread.js there); run as TypeScript (tests,
 * benches, `tsx`), the `.ts` file loaded through tsx, which a worker thread does not inherit from
 * its parent's `--import`.
 */
function workerEntry(): [string | URL, { eval?: boolean }] {
  const asTypeScript = import.meta.url.endsWith('.ts');
  if (!asTypeScript) return [new URL('../../chunks/http-sender.worker.js', import.meta.url), {}];
  const entry = new URL('./http-sender.worker.ts', import.meta.url);
  // tsx is a development dependency; the build never gets here. Its ESM API (the package's `require`
  // condition would give the CommonJS one).
  const tsx = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return [`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true }];
}
