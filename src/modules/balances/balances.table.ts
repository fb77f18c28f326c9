import type { Generated, Insertable, Selectable } from 'kysely';

export type LedgerAccount = 'streamer' | 'service';
export type LedgerSource = 'merchandise_sale';

/**
 * Append-only balance ledger: every credit is one row; a balance is the sum of its rows. Rows are
 * written in the same transaction as the event that earns them (a sale).
 */
export interface BalanceLedgerTable {
  id: Generated<number>;
  account: LedgerAccount;
  /** The streamer for `streamer` rows; null for the service's revenue. */
  user_id: number | null;
  source: LedgerSource;
  /** Id of the source row (merchandise_sales.id). */
  source_id: number;
  /** The share before conversion: minor units of `currency`. */
  amount: number;
  currency: string;
  /** Units of credited_currency per unit of currency, as used (1 when they are the same). */
  rate: number;
  /** What the account gains: minor units of `credited_currency`. */
  credited_amount: number;
  credited_currency: string;
  created_at: number;
}

export interface BalanceTables {
  balance_ledger: BalanceLedgerTable;
}

export type LedgerRow = Selectable<BalanceLedgerTable>;
export type NewLedgerRow = Insertable<BalanceLedgerTable>;
