import type { Kysely } from 'kysely';
import { signalCommit } from '../../db/database.js';
import { dialectOf, isUniqueViolation } from '../../db/dialect.js';
import { GroupCommit, type ItemOutcome } from '../../db/group-commit.js';
import type { DB } from '../../db/schema.js';
import { ForbiddenError, msg, ValidationError, type FieldMessages } from '../../domain/errors.js';
import type { RateTable } from '../../domain/rates.js';
import { creditIn, revenueShares, RevenueTooLargeError, type Credit } from '../../domain/revenue.js';
import { insertLedgerEntries } from '../balances/balances.repository.js';
import { loadRates } from '../currencies/currencies.repository.js';
import { isMerchandiseActive } from '../merchandise/merchandise.resource.js';
import { CredentialsChangedError } from '../merchants/merchant-auth.js';
import { channelsOf } from '../outbox/events.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import type { SaleInput } from './sales.input.js';
import { findSaleContext, findSaleContexts, insertSale, insertSalesWithCredits, type SaleContext, type SaleWrite } from './sales.repository.js';
import { toSaleAlertResource, type SaleAlertResource } from './sales.resource.js';
import type { SaleRow } from './sales.table.js';
import { durableWrite } from './write-batcher.js';

export interface RecordedSale {
  resource: SaleAlertResource;
  /** False for an identical retry of an earlier sale (compatibility.md §3: 200, nothing credited again). */
  created: boolean;
}

/** The widget's `reason` for a sale alert (compatibility.md §5 asks for the values we add to be documented). */
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
    throw ValidationError.field('external_id', msg('err.sale.external_id_reused'));
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

/** What a sale's look-up decided: replay an earlier sale, or write this new one. Errors are thrown. */
type SalePlan = { replay: RecordedSale } | { write: SaleWrite };

/**
 * Checks a sale against what the look-up found and works out its rows: the sale, the streamer's and
 * the service's credits (revenue arithmetic and rounding: src/domain/revenue.ts) and the widget
 * alert. Pure; both write paths below use it.
 */
function planSale(found: SaleContext | undefined, clientId: number, input: SaleInput, rates: RateTable, now: number): SalePlan {
  if (!found) throw ValidationError.field('merchant_identifier', msg('err.field.selected_invalid', { field: 'merchant_identifier' }));
  if (found.merchant.appId !== clientId) throw new ForbiddenError(msg('err.merchant.not_yours'));
  const { merchandise, user } = found;
  if (found.earlier) return { replay: replay(found.earlier, input, merchandise?.id) };

  if (!merchandise || !isMerchandiseActive(merchandise) || !user || !user.is_active) {
    const errors: FieldMessages = {};
    if (!merchandise) errors.merchandise_identifier = [msg('err.field.selected_invalid', { field: 'merchandise_identifier' })];
    else if (!isMerchandiseActive(merchandise)) errors.merchandise_identifier = [msg('err.sale.merchandise_inactive')];
    if (!user || !user.is_active) errors.user_id = [msg('err.field.selected_invalid', { field: 'user_id' })];
    throw new ValidationError(errors);
  }

  let shares: ReturnType<typeof revenueShares>;
  try {
    shares = revenueShares(
      { isPercentage: merchandise.is_percentage === 1, priceUser: merchandise.price_user, priceService: merchandise.price_service, currency: merchandise.currency },
      { amount: input.amount, currency: input.currency, boughtAmount: input.boughtAmount },
    );
  } catch (err) {
    if (err instanceof RevenueTooLargeError) throw ValidationError.field('amount', msg('err.sale.revenue_too_large'));
    throw err;
  }
  const credit = (account: 'streamer' | 'service', userId: number | null, c: Credit) => ({
    account,
    user_id: userId,
    source: 'merchandise_sale' as const,
    amount: c.amount,
    currency: c.currency,
    rate: c.rate,
    credited_amount: c.creditedAmount,
    credited_currency: c.creditedCurrency,
    created_at: now,
  });
  const sale = {
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
  };
  // The alert as it will read once the sale has its id; the id leads the resource (sales.resource.ts).
  const payload = JSON.stringify({ ...toSaleAlertResource({ ...sale, id: 0 }), reason: SALE_REASON });
  return {
    write: {
      sale,
      credits: [credit('streamer', user.id, creditIn(shares.user, user.currency, rates)), credit('service', null, creditIn(shares.service, shares.service.currency, rates))],
      event: { type: SALE_EVENT, userId: user.id, channels: channelsOf(SALE_EVENT, user.id), payloadAfterId: payload.slice(PAYLOAD_ID_PREFIX.length) },
    },
  };
}

const SALE_EVENT = 'merchandise_sale.created';
const PAYLOAD_ID_PREFIX = '{"id":0';

/**
 * SQLite: one sale in the group commit's shared transaction (write-batcher.ts). Statements cost no
 * round trip there, so the sale, its credits and its event are plain statements.
 */
async function recordSaleIn(tx: Kysely<DB>, db: Kysely<DB>, clientId: number, input: SaleInput): Promise<RecordedSale> {
  const found = await findSaleContext(tx, input);
  const plan = planSale(found, clientId, input, await recentRates(tx, db), Date.now());
  if ('replay' in plan) return plan.replay;
  const { sale: row, credits, event } = plan.write;
  const sale = await insertSale(tx, row);
  await insertLedgerEntries(tx, credits.map((c) => ({ ...c, source_id: sale.id })));
  const resource = toSaleAlertResource(sale);
  await enqueueEvent(tx, { type: event.type, userId: event.userId, payload: { ...resource, reason: SALE_REASON } });
  return { resource, created: true };
}

interface SaleJob {
  clientId: number;
  input: SaleInput;
  /** The `merchant_auth` version the request's credentials were verified with; null: read afresh. */
  authVersion: number | null;
}

/**
 * PostgreSQL: a batch of sales in two statements whatever its size — the look-up of all of them, and
 * one write of every new sale with its credits and events (`insertSalesWithCredits`) — instead of
 * ~7 per sale. The write is one statement, so it needs no BEGIN/COMMIT round trips: it commits by
 * itself, and its WAL flush is done when it returns. Reading before it outside a transaction is what
 * READ COMMITTED gives inside one anyway (each statement sees what was committed when it began);
 * what may change in between is caught by the write itself (the unique index). Refused sales and
 * replays write nothing. Two sales of the same merchant and external_id in one batch: the first is
 * written, the other goes to the next batch and replays it (or is refused if it differs); a sale a
 * concurrent writer committed first does the same.
 */
async function recordSaleBatch(db: Kysely<DB>, jobs: readonly SaleJob[]): Promise<ItemOutcome<RecordedSale>[]> {
  const { contexts, authVersion } = await findSaleContexts(db, jobs.map((j) => j.input));
  const rates = await recentRates(db, db);
  const now = Date.now();
  const outcomes: ItemOutcome<RecordedSale>[] = [];
  const writes: { at: number; write: SaleWrite }[] = [];
  const taken = new Set<string>();
  jobs.forEach((job, at) => {
    try {
      if (job.authVersion !== null && job.authVersion !== authVersion) throw new CredentialsChangedError();
      const plan = planSale(contexts[at], job.clientId, job.input, rates, now);
      if ('replay' in plan) {
        outcomes[at] = { ok: true, value: plan.replay };
        return;
      }
      const key = `${plan.write.sale.merchant_id} ${plan.write.sale.external_id}`;
      if (taken.has(key)) {
        outcomes[at] = { retry: true };
        return;
      }
      taken.add(key);
      writes.push({ at, write: plan.write });
    } catch (error) {
      outcomes[at] = { ok: false, error };
    }
  });
  if (writes.length) {
    const rows = await insertSalesWithCredits(db, writes.map((w) => w.write));
    signalCommit(db);
    writes.forEach(({ at }, i) => {
      const row = rows[i];
      outcomes[at] = row ? { ok: true, value: { resource: toSaleAlertResource(row), created: true } } : { retry: true };
    });
  }
  return outcomes;
}

const saleBatches = new WeakMap<Kysely<DB>, GroupCommit<SaleJob, RecordedSale>>();

/**
 * 4.8, durable before it resolves, group-committed with the sales that arrive together on both
 * dialects. compatibility.md §3 idempotency: a repeated external_id of the same merchant replays the original
 * sale (identical content) or is a 400 (different content). Two concurrent first attempts meet the
 * unique (merchant_id, external_id) index: the loser looks again and takes the replay path — never a
 * 500. `authVersion` (PostgreSQL): the `merchant_auth` version the caller's credentials were verified
 * with (`verifySignedRequestCached`); if the batch's look-up reads another, the sale fails with
 * CredentialsChangedError and writes nothing.
 */
export async function recordSale(db: Kysely<DB>, clientId: number, input: SaleInput, authVersion: number | null = null): Promise<RecordedSale> {
  if (dialectOf(db) === 'postgres') {
    let batches = saleBatches.get(db);
    if (!batches) {
      // Two lanes: one batch reads and writes while the previous one waits for its WAL flush.
      batches = new GroupCommit((jobs) => recordSaleBatch(db, jobs), { lanes: 2 });
      saleBatches.set(db, batches);
    }
    return batches.submit({ clientId, input, authVersion });
  }
  try {
    return await durableWrite(db, (tx) => recordSaleIn(tx, db, clientId, input));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return durableWrite(db, (tx) => recordSaleIn(tx, db, clientId, input));
  }
}
