import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { msg, NotFoundError } from '../../domain/errors.js';
import { toMajor } from '../../domain/money.js';
import { convertMinor } from '../../domain/rates.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { loadRates } from '../currencies/currencies.repository.js';
import * as repo from './balances.repository.js';
import type { LedgerRow } from './balances.table.js';

export interface Balance {
  /** The streamer's main currency. */
  currency: string;
  /** Major units (JSON number), in `currency`. */
  amount: number;
  /** Minor units, in `currency`. */
  amount_minor: number;
  /** The ledger sums per credited currency (major units): more than one only after a main-currency change. */
  by_currency: Record<string, number>;
}

/**
 * A streamer's balance: the sum of their ledger rows. Rows are credited in the main currency of the
 * time; if the streamer has changed it since, older sums are converted at today's rates (half-up).
 */
export async function balanceOf(db: Kysely<DB>, userId: number): Promise<Balance> {
  const user = await findStreamer(db, userId);
  if (!user) throw new NotFoundError(msg('err.account.no_such_user'));
  const sums = await repo.streamerLedgerSums(db, userId);
  let minor = 0;
  const byCurrency: Record<string, number> = {};
  const foreign = sums.filter((s) => s.currency !== user.currency);
  const rates = foreign.length ? await loadRates(db) : {};
  for (const s of sums) {
    byCurrency[s.currency] = toMajor(s.total);
    minor += s.currency === user.currency ? s.total : convertMinor(s.total, s.currency, user.currency, rates);
  }
  return { currency: user.currency, amount: toMajor(minor), amount_minor: minor, by_currency: byCurrency };
}

/** One page (1-based) of a streamer's ledger, newest first. */
export async function streamerLedger(db: Kysely<DB>, userId: number, page: number, perPage: number): Promise<{ rows: LedgerRow[]; total: number }> {
  return repo.pageOfStreamerLedger(db, userId, { limit: perPage, offset: (page - 1) * perPage });
}
