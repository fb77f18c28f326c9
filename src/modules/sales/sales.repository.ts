import { sql, type CompiledQuery, type Expression, type Kysely } from 'kysely';
import { executeNamed } from '../../db/named-statements.js';
import type { DB } from '../../db/schema.js';
import type { NewLedgerRow } from '../balances/balances.table.js';
import type { MerchandiseRow } from '../merchandise/merchandise.table.js';
import type { EventType } from '../outbox/events.js';
import type { NewSaleRow, SaleRow } from './sales.table.js';

export type SaleKeys = { merchantIdentifier: string; merchandiseIdentifier: string; userId: number; externalId: string };

/** What a sale depends on, as one look-up found it; null where nothing matched. */
export interface SaleContext {
  merchant: { id: number; appId: number };
  merchandise: Pick<MerchandiseRow, 'id' | 'is_active' | 'end_at' | 'is_percentage' | 'price_user' | 'price_service' | 'currency'> | null;
  user: { id: number; currency: string; is_active: number } | null;
  /** An earlier sale of this merchant with the same external_id (compatibility.md §3 idempotency). */
  earlier: SaleRow | null;
}

/** What the sale look-ups read, aliased so a missing merchandise, streamer or earlier sale reads as nulls. */
const CONTEXT_COLUMNS = [
  'merchants.id as merchantId',
  'merchants.app_id as appId',
  'users.id as userId',
  'users.currency as userCurrency',
  'users.is_active as userActive',
  'merchandise.id',
  'merchandise.is_active',
  'merchandise.end_at',
  'merchandise.is_percentage',
  'merchandise.price_user',
  'merchandise.price_service',
  'merchandise.currency',
  'merchandise_sales.id as saleId',
  'merchandise_sales.merchandise_id as saleMerchandiseId',
  'merchandise_sales.user_id as saleUserId',
  'merchandise_sales.amount as saleAmount',
  'merchandise_sales.currency as saleCurrency',
  'merchandise_sales.bought_amount as saleBoughtAmount',
  'merchandise_sales.username as saleUsername',
  'merchandise_sales.message as saleMessage',
  'merchandise_sales.is_shown as saleIsShown',
  'merchandise_sales.created_at as saleCreatedAt',
  'merchandise_sales.shown_at as saleShownAt',
] as const;

/** One row of a sale look-up (CONTEXT_COLUMNS). */
interface ContextRow {
  merchantId: number;
  appId: number;
  userId: number | null;
  userCurrency: string | null;
  userActive: number | null;
  id: number | null;
  is_active: number | null;
  end_at: number | null;
  is_percentage: number | null;
  price_user: number | null;
  price_service: number | null;
  currency: string | null;
  saleId: number | null;
  saleMerchandiseId: number | null;
  saleUserId: number | null;
  saleAmount: number | null;
  saleCurrency: string | null;
  saleBoughtAmount: number | null;
  saleUsername: string | null;
  saleMessage: string | null;
  saleIsShown: number | null;
  saleCreatedAt: number | null;
  saleShownAt: number | null;
}

/** The keys of one sale look-up: values, or (in the batched look-up) references to a row of keys. */
type KeyOperands = { [K in keyof SaleKeys]: SaleKeys[K] | Expression<SaleKeys[K]> };

/** The look-up of one sale's context (CONTEXT_COLUMNS), every join an equality on a key: index look-ups only. */
function contextQuery(db: Kysely<DB>, keys: KeyOperands) {
  return db
    .selectFrom('merchants')
    .leftJoin('merchandise', (join) => join.onRef('merchandise.merchant_id', '=', 'merchants.id').on('merchandise.identifier', '=', keys.merchandiseIdentifier))
    .leftJoin('users', (join) => join.on('users.id', '=', keys.userId))
    .leftJoin('merchandise_sales', (join) => join.onRef('merchandise_sales.merchant_id', '=', 'merchants.id').on('merchandise_sales.external_id', '=', keys.externalId))
    .select(CONTEXT_COLUMNS)
    .where('merchants.identifier', '=', keys.merchantIdentifier);
}

/**
 * Merchant (by identifier), its merchandise, the streamer and an earlier sale with this external_id
 * in one round trip — the hot path of bench/sales.ts on SQLite. Undefined when the merchant does not exist.
 */
export async function findSaleContext(db: Kysely<DB>, keys: SaleKeys): Promise<SaleContext | undefined> {
  const found = await contextQuery(db, keys).executeTakeFirst();
  return found && toSaleContext(found, keys.externalId);
}

/** A look-up row (merchant, then nullable merchandise, streamer and earlier sale columns) as a SaleContext. */
function toSaleContext(found: ContextRow, externalId: string): SaleContext {
  return {
    merchant: { id: found.merchantId, appId: found.appId },
    merchandise:
      found.id === null
        ? null
        : { id: found.id, is_active: found.is_active!, end_at: found.end_at, is_percentage: found.is_percentage!, price_user: found.price_user!, price_service: found.price_service!, currency: found.currency! },
    user: found.userId === null ? null : { id: found.userId, currency: found.userCurrency!, is_active: found.userActive! },
    earlier:
      found.saleId === null
        ? null
        : {
            id: found.saleId,
            merchant_id: found.merchantId,
            merchandise_id: found.saleMerchandiseId!,
            user_id: found.saleUserId!,
            external_id: externalId,
            amount: found.saleAmount!,
            currency: found.saleCurrency!,
            bought_amount: found.saleBoughtAmount!,
            username: found.saleUsername,
            message: found.saleMessage,
            is_shown: found.saleIsShown!,
            created_at: found.saleCreatedAt!,
            shown_at: found.saleShownAt,
          },
  };
}

export async function insertSale(db: Kysely<DB>, row: NewSaleRow): Promise<SaleRow> {
  return db.insertInto('merchandise_sales').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * PostgreSQL: `findSaleContext` for a whole batch of sales in one statement (the keys travel as
 * arrays, so the statement text is the same for every batch size), by position (undefined where the
 * merchant does not exist), and the `merchant_auth` version as of the same snapshot: requests
 * verified with cached credentials compare it with theirs (merchant-auth.ts) instead of reading it
 * in a round trip of their own.
 */
export async function findSaleContexts(db: Kysely<DB>, keys: readonly SaleKeys[]): Promise<{ contexts: (SaleContext | undefined)[]; authVersion: number }> {
  const arrays = [keys.map((k) => k.merchantIdentifier), keys.map((k) => k.merchandiseIdentifier), keys.map((k) => k.userId), keys.map((k) => k.externalId)];
  const rows = (await db.executeQuery<LookupRow>({ ...(contextsQuery ??= buildContextsQuery(db)), parameters: arrays })).rows;
  const contexts: (SaleContext | undefined)[] = new Array(keys.length).fill(undefined);
  for (const row of rows) if (row.merchantId !== null) contexts[Number(row.ord) - 1] = toSaleContext(row as ContextRow, keys[Number(row.ord) - 1]!.externalId);
  return { contexts, authVersion: Number(rows[0]?.auth_version ?? 0) };
}

/** A row of the batch look-up: a key's position, the version, and its context (all null where no merchant matched). */
type LookupRow = { [K in keyof ContextRow]: ContextRow[K] | null } & { ord: number; auth_version: number | null };

/**
 * The batch look-up's statement, built and compiled once: its text is the same for every batch (the
 * keys are its only parameters, four arrays), and building it with Kysely cost more per batch than
 * the rest of the batch's planning.
 */
let contextsQuery: CompiledQuery | undefined;

function buildContextsQuery(db: Kysely<DB>): CompiledQuery {
  const batch = sql<{ merchant_identifier: string; merchandise_identifier: string; user_id: number; external_id: string; ord: number }>`(select * from unnest(
    ${[]}::text[], ${[]}::text[], ${[]}::bigint[], ${[]}::text[]
  ) with ordinality as k(merchant_identifier, merchandise_identifier, user_id, external_id, ord))`;
  // Each row of keys runs the one-sale look-up as a lateral subquery, where its keys are constants:
  // every join stays an index look-up on both columns whatever the planner thinks of the tables'
  // sizes. (As a plain join over the keys, a freshly loaded table without statistics had PostgreSQL
  // scan all of a merchant's sales for each key.) A left join, so the version comes back even when
  // no key matched a merchant.
  const key = <T>(column: string) => sql<T>`${sql.ref(`k.${column}`)}`;
  const query = db
    .selectFrom(batch.as('k'))
    .leftJoinLateral(
      contextQuery(db, {
        merchantIdentifier: key<string>('merchant_identifier'),
        merchandiseIdentifier: key<string>('merchandise_identifier'),
        userId: key<number>('user_id'),
        externalId: key<string>('external_id'),
      }).as('c'),
      (join) => join.onTrue(),
    )
    .selectAll('c')
    .select(['k.ord', sql<number | null>`(select version from change_versions where name = 'merchant_auth')`.as('auth_version')]);
  // Not a named statement (unlike the write below): PostgreSQL could keep a generic plan made while
  // the tables were nearly empty — probing merchandise_sales by external_id alone, a scan of the
  // whole index per key — until the next ANALYZE, with the table long grown by then.
  const compiled = query.compile();
  if (compiled.parameters.length !== 4) throw new Error('the sale look-up takes exactly its four arrays of keys');
  return compiled;
}

/** A sale to write with its two credits and its alert (sales.service.ts computes them). */
export interface SaleWrite {
  /** Every column but the id, which the write gives it. */
  sale: Omit<SaleRow, 'id'>;
  /** Streamer's credit, then the service's; `source_id` is the new sale's id, known only once it is written. */
  credits: [Omit<NewLedgerRow, 'source_id'>, Omit<NewLedgerRow, 'source_id'>];
  event: {
    type: EventType;
    userId: number;
    channels: string[];
    /**
     * The event's JSON payload after its leading `{"id":<sale id>`: the id is spliced in by the
     * statement, so the payload is the same bytes `JSON.stringify` gives for the whole object.
     */
    payloadAfterId: string;
  };
}

/**
 * PostgreSQL: writes a batch of sales, their ledger rows and their outbox events in ONE statement
 * (data-modifying CTEs; values as arrays), so a batch costs one round trip whatever its size, and,
 * run outside a transaction, commits by itself: a sale exists if and only if its credits and its
 * event do. The ledger and the outbox belong to other modules; they are written here because the
 * point is one statement for the three.
 *
 * A sale whose (merchant, external_id) already exists — a concurrent retry committed it first — is
 * skipped (`on conflict do nothing`, after waiting for that writer's transaction), gets no credits
 * and no event, and comes back as null: the caller looks again and replays it. Rows are written in
 * (merchant_id, external_id) order, so two batches inserting the same keys take their locks in one
 * order and never deadlock.
 */
export async function insertSalesWithCredits(db: Kysely<DB>, writes: readonly SaleWrite[]): Promise<(SaleRow | null)[]> {
  const col = <T>(pick: (w: SaleWrite) => T) => writes.map(pick);
  const credit = (i: 0 | 1) => sql`${col((w) => w.credits[i].account)}::text[], ${col((w) => w.credits[i].user_id)}::bigint[],
    ${col((w) => w.credits[i].amount)}::bigint[], ${col((w) => w.credits[i].currency)}::text[], ${col((w) => w.credits[i].rate)}::float8[],
    ${col((w) => w.credits[i].credited_amount)}::bigint[], ${col((w) => w.credits[i].credited_currency)}::text[]`;
  const statement = sql<{ id: number; ord: number }>`
    with input as (
      select * from unnest(
        ${col((w) => w.sale.merchant_id)}::bigint[], ${col((w) => w.sale.merchandise_id)}::bigint[], ${col((w) => w.sale.user_id)}::bigint[],
        ${col((w) => w.sale.external_id)}::text[], ${col((w) => w.sale.amount)}::bigint[], ${col((w) => w.sale.currency)}::text[],
        ${col((w) => w.sale.bought_amount)}::bigint[], ${col((w) => w.sale.username)}::text[], ${col((w) => w.sale.message)}::text[],
        ${col((w) => w.sale.created_at)}::bigint[],
        ${credit(0)}, ${credit(1)},
        ${col((w) => w.event.type)}::text[], ${col((w) => w.event.userId)}::bigint[], ${col((w) => JSON.stringify(w.event.channels))}::text[],
        ${col((w) => w.event.payloadAfterId)}::text[]
      ) with ordinality as i(
        merchant_id, merchandise_id, user_id, external_id, amount, currency, bought_amount, username, message, created_at,
        c1_account, c1_user_id, c1_amount, c1_currency, c1_rate, c1_credited_amount, c1_credited_currency,
        c2_account, c2_user_id, c2_amount, c2_currency, c2_rate, c2_credited_amount, c2_credited_currency,
        event_type, event_user_id, event_channels, event_payload_after_id, ord
      )
    ),
    sale as (
      insert into merchandise_sales (merchant_id, merchandise_id, user_id, external_id, amount, currency, bought_amount, username, message, is_shown, created_at, shown_at)
      select merchant_id, merchandise_id, user_id, external_id, amount, currency, bought_amount, username, message, 0, created_at, null
      from input order by merchant_id, external_id
      on conflict (merchant_id, external_id) do nothing
      returning *
    ),
    written as (
      select sale.id as sale_id, input.* from sale join input using (merchant_id, external_id)
    ),
    ledger as (
      insert into balance_ledger (account, user_id, source, source_id, amount, currency, rate, credited_amount, credited_currency, created_at)
      select c.account, c.user_id, 'merchandise_sale', w.sale_id, c.amount, c.currency, c.rate, c.credited_amount, c.credited_currency, w.created_at
      from written w
      cross join lateral (values
        (1, w.c1_account, w.c1_user_id, w.c1_amount, w.c1_currency, w.c1_rate, w.c1_credited_amount, w.c1_credited_currency),
        (2, w.c2_account, w.c2_user_id, w.c2_amount, w.c2_currency, w.c2_rate, w.c2_credited_amount, w.c2_credited_currency)
      ) as c(n, account, user_id, amount, currency, rate, credited_amount, credited_currency)
      order by w.sale_id, c.n
    ),
    event as (
      insert into outbox (type, user_id, channels, payload, created_at)
      select event_type, event_user_id, event_channels, '{"id":' || sale_id || event_payload_after_id, created_at
      from written order by sale_id
    )
    select sale.id, input.ord from sale join input using (merchant_id, external_id)`;
  // One text for every batch (values as arrays): a named statement, parsed and planned once per
  // connection. Its plan reads no table by a chosen path (ON CONFLICT uses the unique index), so a
  // plan made when the tables were empty stays right as they grow.
  const result = await executeNamed(db, statement.compile(db));
  // Only the ids come back: every other column is what was written.
  const written: (SaleRow | null)[] = new Array(writes.length).fill(null);
  for (const { id, ord } of result.rows) written[Number(ord) - 1] = { id, ...writes[Number(ord) - 1]!.sale };
  return written;
}
