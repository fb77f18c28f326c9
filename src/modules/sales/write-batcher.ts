import type { Kysely } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { beginJob, keepJob, undoJob } from './write-batcher.repository.js';

type Work<T> = (tx: Kysely<DB>) => Promise<T>;

interface Job {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit for SQLite. Every sale must be durable before we answer (synchronous=FULL: one fsync
 * per COMMIT), and a disk does a few thousand fsyncs a second at best — so writes that arrive
 * together share one transaction. Each job runs inside its own SAVEPOINT: a job that throws is
 * rolled back alone and gets its error; the others commit. Nobody's promise settles before the
 * COMMIT that made their write durable has returned.
 *
 * Jobs must do all their I/O through the `tx` they are given (SQLite has one connection; using the
 * outer handle inside a job would wait for the very transaction it runs in).
 */
export class WriteBatcher {
  readonly #queue: Job[] = [];
  #scheduled = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    const jobs = this.#queue.splice(0, this.maxBatch);
    try {
      if (jobs.length === 1) {
        // Alone in its transaction: the rollback of the whole transaction is the job's rollback.
        const job = jobs[0]!;
        await this.db.transaction().execute(job.work).then(job.resolve, job.reject);
        return;
      }
      const outcomes = (await this.#optimistic(jobs)) ?? (await this.#isolated(jobs));
      jobs.forEach((job, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) job.resolve(outcome.value);
        else job.reject(outcome.error);
      });
    } catch (error) {
      for (const job of jobs) job.reject(error);
    } finally {
      if (this.#queue.length) setImmediate(() => void this.#flush());
      else this.#scheduled = false;
    }
  }

  /**
   * Every job in one transaction with no savepoints (the common case: nobody fails). If any job
   * throws, the whole transaction is rolled back and null tells the caller to redo the batch
   * with one savepoint per job — jobs only touch `tx`, so running them again is safe.
   */
  async #optimistic(jobs: Job[]): Promise<Outcome[] | null> {
    try {
      return await this.db.transaction().execute(async (tx) => {
        const outcomes: Outcome[] = [];
        for (const job of jobs) outcomes.push({ ok: true, value: await job.work(tx) });
        return outcomes;
      });
    } catch (error) {
      if (isCommitFailure(error)) throw error;
      return null;
    }
  }

  async #isolated(jobs: Job[]): Promise<Outcome[]> {
    return this.db.transaction().execute(async (tx) => {
      const outcomes: Outcome[] = [];
      for (const job of jobs) {
        await beginJob(tx);
        try {
          const value = await job.work(tx);
          await keepJob(tx);
          outcomes.push({ ok: true, value });
        } catch (error) {
          await undoJob(tx);
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A job's own error is retried in isolation; the database refusing the transaction is not. */
function isCommitFailure(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^SQLITE_(BUSY|IOERR|FULL|READONLY|CORRUPT|NOTADB|CANTOPEN)/.test(code);
}

const batchers = new WeakMap<Kysely<DB>, WriteBatcher>();

/**
 * Runs `work` in a transaction that has committed when the promise resolves: batched with other
 * writers on SQLite, its own transaction on PostgreSQL (which group-commits concurrent
 * transactions itself).
 */
export function durableWrite<T>(db: Kysely<DB>, work: Work<T>): Promise<T> {
  if (dialectOf(db) === 'postgres') return db.transaction().execute(work);
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new WriteBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher.run(work);
}
