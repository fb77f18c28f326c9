export interface CurrencyRatesTable {
  currency: string;
  /** Units of this currency that one US dollar buys. */
  per_usd: number;
  /** The date the rate describes (YYYY-MM-DD). */
  as_of: string;
  updated_at: number;
}

export interface CurrencyTables {
  currency_rates: CurrencyRatesTable;
}
