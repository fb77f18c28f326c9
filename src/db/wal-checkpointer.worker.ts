import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from './database.js';
import { ThreadWriteLock } from './thread-write-lock.js';
import type { CheckpointerThreadData } from './wal-checkpointer.js';

/**
 * The WAL checkpoint thread (wal-checkpointer.ts): a connection of its own that checkpoints the
 * file every `everyMs`, so the connection that serves requests never does it inside a commit.
 */
const data = workerData as CheckpointerThreadData;
// FULL, as every connection here: a checkpoint syncs the WAL before it copies and the file after.
const sqlite = openSqlite(data.file);
const checkpoint = sqlite.prepare('pragma wal_checkpoint(PASSIVE)');
const lock = new ThreadWriteLock(data.lock.buffer, data.lock.holder, false);
const stats = new Float64Array(data.stats);
let last = { log: 0, checkpointed: 0 };
let stopped = false;

function run(): { log: number; checkpointed: number } {
  const started = performance.now();
  const now = checkpoint.get() as { busy: number; log: number; checkpointed: number };
  // Nothing written since the last run: it copied nothing and cost no I/O; not counted.
  if (now.log !== last.log || now.checkpointed !== last.checkpointed) {
    const ms = performance.now() - started;
    stats[0]! += 1;
    stats[1]! += ms;
    stats[2] = Math.max(stats[2]!, ms);
    stats[3] = Math.max(stats[3]!, now.log);
  }
  last = now;
  stats[5] = now.log;
  return now;
}

async function round(): Promise<void> {
  if (stopped) return;
  // PASSIVE takes no write lock: commits go on while it copies and syncs (the bulk of the work).
  const passive = run();
  if (passive.log < data.restartFrames) return;
  // The WAL starts over only at a write that finds it all copied, which commits made meanwhile
  // prevent. A last pass with this process's writers held back (the requests' side still goes
  // first, and waits without blocking its event loop) copies the few frames they added.
  await lock.acquire();
  try {
    if (stopped) return;
    stats[4]! += 1;
    run();
  } finally {
    lock.release();
  }
}

let timer: NodeJS.Timeout | null = null;
const next = () => {
  timer = setTimeout(() => {
    round().then(() => !stopped && next(), (err: unknown) => parentPort!.postMessage({ t: 'failed', message: (err as Error).message }));
  }, data.everyMs);
};
parentPort!.on('message', (message: 'stop') => {
  if (message !== 'stop') return;
  stopped = true;
  if (timer) clearTimeout(timer);
  sqlite.close();
  parentPort!.close();
});
next();
parentPort!.postMessage({ t: 'ready' });
