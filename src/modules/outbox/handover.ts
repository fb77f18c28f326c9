import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * PostgreSQL: the relay of this process that publishes, as they commit, the outbox rows a
 * statement claims for it (outbox.relay.ts `#publishClaimed`), so that an event goes out without
 * a relay round reading it back. Registered by the relay that takes its database's commits.
 */
interface Claimant {
  /** The claim the rows carry (`claimed_by`): the relay's ClaimOwner id. */
  owner: string;
  /** A claim older than this is another relay's to take over (the relay's claimTimeoutMs). */
  timeoutMs: number;
}

const claimants = new WeakMap<Kysely<DB>, Claimant>();

/** What a writing statement needs to claim its outbox rows for this process's relay. */
export interface OutboxClaim {
  owner: string;
  /** When the statement ran (ms): the rows' `claimed_at`, and "due" for the rows it must not pass. */
  now: number;
  /** Claims older than this are dead: their rows count as unclaimed. */
  staleBefore: number;
}

/**
 * The claim for rows written now through `db`, or null when no relay of this process publishes
 * its commits (a worker of `serve --workers`, a CLI, a relay stopped): rows are then left
 * unclaimed, for a relay round to read.
 */
export function outboxClaim(db: Kysely<DB>): OutboxClaim | null {
  const claimant = claimants.get(db);
  if (!claimant) return null;
  const now = Date.now();
  return { owner: claimant.owner, now, staleBefore: now - claimant.timeoutMs };
}

/** The relay takes the claims of rows written through `db` from now on; returns the withdrawal. */
export function claimOutboxRows(db: Kysely<DB>, claimant: Claimant): () => void {
  claimants.set(db, claimant);
  return () => {
    if (claimants.get(db) === claimant) claimants.delete(db);
  };
}
