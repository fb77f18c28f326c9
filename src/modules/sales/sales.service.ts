import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { ForbiddenError, ValidationError } from '../../domain/errors.js';
import type { RateTable } from '../../domain/rates.js';
import { creditIn, revenueShares, RevenueTooLargeError } from '../../domain/revenue.js';
import { insertLedgerEntries } from '../balances/balances.repository.js';
import { loadRates } from '../currencies/currencies.repository.js';
import { isMerchandiseActive } from '../merchandise/merchandise.resource.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import type { SaleInput } from './sales.input.js';
import { findSaleContext, insertSale } from './sales.repository.js';
import { toSaleAlertResource, type SaleAlertResource } from './sales.resource.js';
import type { SaleRow } from './sales.table.js';
import { durableWrite } from './write-batcher.js';

export interface RecordedSale {
  resource: SaleAlertResource;
  /** False for an identical retry of an earlier sale (INTEROP §3: 200, nothing credited again). */
  created: boolean;
}

/** The widget's `reason` for a sale alert (INTEROP §5 asks for the values we add to be documented). */
export const SALE_REASON = 'merchandise-sale';

function sameSale(row: SaleRow, input: SaleInput, merchandiseId: number | undefined): boolean {
  return (
    row.user_id === input.userId &&
    row.merchandise_id === merchandiseId &&
    row.amount === input.amount &&
    row.currency === input.currency &&
    row.bought_amount === input.boughtAmount &&
    row.username === input.username &&
    row.message === input.message
  );
}

function replay(existing: SaleRow, input: SaleInput, merchandiseId: number | undefined): RecordedSale {
  if (!sameSale(existing, input, merchandiseId)) {
    throw ValidationError.field('external_id', 'The external_id has already been used for a different sale.');
  }
  return { resource: toSaleAlertResource(existing), created: false };
}

// Rates change a few times a day (`openalerts rates set`); re-reading them for every sale of a busy
// merchant buys nothing. A change reaches sales within a second, from whichever process made it.
const RATES_TTL_MS = 1000;
const ratesCache = new WeakMap<Kysely<DB>, { rates: RateTable; at: number }>();

async function recentRates(tx: Kysely<DB>, db: Kysely<DB>): Promise<RateTable> {
  const key = db;
  const hit = ratesCache.get(key);
  if (hit && Date.now() - hit.at < RATES_TTL_MS) return hit.rates;
  const rates = await loadRates(tx);
  ratesCache.set(key, { rates, at: Date.now() });
  return rates;
}

/**
 * Records a sale, credits the streamer and the service, and queues the widget alert — all in one
 * transaction (a sale exists if and only if its ledger rows and its event do). Revenue arithmetic
 * and rounding: src/domain/revenue.ts.
 */
async function recordSaleIn(tx: Kysely<DB>, db: Kysely<DB>, clientId: number, input: SaleInput): Promise<RecordedSale> {
  const found = await findSaleContext(tx, input);
  if (!found) throw ValidationError.field('merchant_identifier', 'The selected merchant_identifier is invalid.');
  if (found.merchant.appId !== clientId) throw new ForbiddenError('This merchant does not belong to your application.');
  const { merchandise, user } = found;
  if (found.earlier) return replay(found.earlier, input, merchandise?.id);

  if (!merchandise || !isMerchandiseActive(merchandise) || !user || !user.is_active) {
    const errors: Record<string, string[]> = {};
    if (!merchandise) errors.merchandise_identifier = ['The selected merchandise_identifier is invalid.'];
    else if (!isMerchandiseActive(merchandise)) errors.merchandise_identifier = ['This merchandise is not active; sales of it are not accepted.'];
    if (!user || !user.is_active) errors.user_id = ['The selected user_id is invalid.'];
    throw new ValidationError(errors);
  }

  let shares: ReturnType<typeof revenueShares>;
  try {
    shares = revenueShares(
      { isPercentage: merchandise.is_percentage === 1, priceUser: merchandise.price_user, priceService: merchandise.price_service, currency: merchandise.currency },
      { amount: input.amount, currency: input.currency, boughtAmount: input.boughtAmount },
    );
  } catch (err) {
    if (err instanceof RevenueTooLargeError) throw ValidationError.field('amount', err.message);
    throw err;
  }
  const rates = await recentRates(tx, db);
  const streamerCredit = creditIn(shares.user, user.currency, rates);
  const serviceCredit = creditIn(shares.service, shares.service.currency, rates);

  const now = Date.now();
  const sale = await insertSale(tx, {
    merchant_id: found.merchant.id,
    merchandise_id: merchandise.id,
    user_id: user.id,
    external_id: input.externalId,
    amount: input.amount,
    currency: input.currency,
    bought_amount: input.boughtAmount,
    username: input.username,
    message: input.message,
    is_shown: 0,
    created_at: now,
    shown_at: null,
  });
  const ledgerRow = (account: 'streamer' | 'service', userId: number | null, c: typeof streamerCredit) => ({
    account,
    user_id: userId,
    source: 'merchandise_sale' as const,
    source_id: sale.id,
    amount: c.amount,
    currency: c.currency,
    rate: c.rate,
    credited_amount: c.creditedAmount,
    credited_currency: c.creditedCurrency,
    created_at: now,
  });
  await insertLedgerEntries(tx, [ledgerRow('streamer', user.id, streamerCredit), ledgerRow('service', null, serviceCredit)]);
  const resource = toSaleAlertResource(sale);
  await enqueueEvent(tx, { type: 'merchandise_sale.created', userId: user.id, payload: { ...resource, reason: SALE_REASON } });
  return { resource, created: true };
}

/**
 * 4.8, durable before it resolves. INTEROP §3 idempotency: a repeated external_id of the same
 * merchant replays the original sale (identical content) or is a 400 (different content). Two
 * concurrent first attempts meet the unique (merchant_id, external_id) index: the loser retries and
 * takes the replay path — never a 500.
 */
export async function recordSale(db: Kysely<DB>, clientId: number, input: SaleInput): Promise<RecordedSale> {
  try {
    return await durableWrite(db, (tx) => recordSaleIn(tx, db, clientId, input));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return durableWrite(db, (tx) => recordSaleIn(tx, db, clientId, input));
  }
}
