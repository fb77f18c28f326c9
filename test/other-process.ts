import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { scriptArgs } from './process.js';

/**
 * Another process on the same database: a genuinely separate connection on both dialects. On SQLite
 * two connections in ONE process cannot contend honestly (better-sqlite3 waits for a lock
 * synchronously, so the waiter blocks the holder's event loop until busy_timeout); in another
 * process they contend as the CLI and a server do in production.
 *
 * `call` runs one exported function of a src/ module there, with the process's own database handle
 * as the first argument, and resolves with its (structured-cloned) result. A rejection keeps the
 * remote error's `name` and `message`, so callers can check which domain error it was.
 */
export interface OtherProcess {
  call<T = unknown>(module: string, fn: string, ...args: unknown[]): Promise<T>;
  close(): Promise<void>;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; name: string; message: string };

export async function otherProcess(env: { DATABASE_URL?: string }): Promise<OtherProcess> {
  if (!env.DATABASE_URL) throw new Error('otherProcess needs the test database environment (DATABASE_URL)');
  const args = scriptArgs('test/other-process.worker.ts');
  const child: ChildProcess = fork(args.at(-1)!, [], {
    execArgv: args.slice(0, -1),
    env: { ...process.env, DATABASE_URL: env.DATABASE_URL },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 0;
  child.on('message', (reply: Reply | 'ready') => {
    if (reply === 'ready') return;
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (!waiter) return;
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(Object.assign(new Error(reply.message), { name: reply.name }));
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the other process exited (${code}) before answering`));
    pending.clear();
  });
  const [first] = (await once(child, 'message')) as [unknown];
  if (first !== 'ready') throw new Error(`the other process did not start: ${String(first)}`);
  return {
    call<T>(module: string, fn: string, ...args: unknown[]): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, module, fn, args });
      });
    },
    async close() {
      if (child.exitCode !== null) return;
      child.send('close');
      await once(child, 'exit');
    },
  };
}
