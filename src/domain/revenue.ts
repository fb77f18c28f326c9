import { MAX_MINOR } from './money.js';
import { convertMinor, crossRate, type RateTable } from './rates.js';

/**
 * Revenue of a merchandise sale (compatibility.md §3).
 *
 * Money rules — every figure is an integer number of minor units, and each one is rounded at most
 * once, half-up (x.5 goes up), to the minor unit:
 *  1. Fixed prices (`is_percentage = 0`): share = price × bought_amount, in the merchandise currency.
 *     Exact integer arithmetic, no rounding.
 *  2. Percentages (`is_percentage = 1`): share = sale amount × percentage / 100, in the sale currency,
 *     rounded half-up to the minor unit HERE (exact BigInt arithmetic, percentages are stored in
 *     hundredths of a percent).
 *  3. The streamer's share is then converted to the streamer's main currency through USD with the
 *     rate table (`convertMinor`): minor × (to per USD) / (from per USD), rounded half-up to the minor
 *     unit of the target currency HERE. No conversion (and no rounding) when the currencies match.
 *  The ledger keeps the figure after step 1/2 (`amount`, `currency`), the rate of step 3 and the
 *  credited figure, so every row can be re-derived from its own columns. The service's share is
 *  recorded in its source currency (steps 1/2 only).
 */
export interface RevenueTerms {
  isPercentage: boolean;
  /** Minor units of `currency` per item, or hundredths of a percent (1050 = 10.5 %). */
  priceUser: number;
  priceService: number;
  /** The merchandise currency. */
  currency: string;
}

export interface SaleFigures {
  /** Grand total, minor units of `currency`. */
  amount: number;
  currency: string;
  boughtAmount: number;
}

export interface Share {
  amount: number;
  currency: string;
}

export interface Credit extends Share {
  /** Units of `creditedCurrency` per unit of `currency`. */
  rate: number;
  creditedAmount: number;
  creditedCurrency: string;
}

export class RevenueTooLargeError extends Error {}

/** amount × hundredths-of-a-percent / 10 000, half-up, exact. */
export function percentOf(amountMinor: number, hundredthsOfPercent: number): number {
  const product = BigInt(amountMinor) * BigInt(hundredthsOfPercent);
  return Number((product + 5000n) / 10000n);
}

function checked(value: bigint | number): number {
  const n = typeof value === 'bigint' ? value : BigInt(value);
  if (n > BigInt(MAX_MINOR)) throw new RevenueTooLargeError('The revenue of this sale is too large.');
  return Number(n);
}

/** Steps 1–2: the streamer's and the service's shares in their source currency. */
export function revenueShares(terms: RevenueTerms, sale: SaleFigures): { user: Share; service: Share } {
  if (terms.isPercentage) {
    return {
      user: { amount: checked(percentOf(sale.amount, terms.priceUser)), currency: sale.currency },
      service: { amount: checked(percentOf(sale.amount, terms.priceService)), currency: sale.currency },
    };
  }
  const items = BigInt(sale.boughtAmount);
  return {
    user: { amount: checked(BigInt(terms.priceUser) * items), currency: terms.currency },
    service: { amount: checked(BigInt(terms.priceService) * items), currency: terms.currency },
  };
}

/** Step 3: a share credited in `target` (the streamer's main currency). */
export function creditIn(share: Share, target: string, rates: RateTable): Credit {
  return {
    ...share,
    rate: crossRate(share.currency, target, rates),
    creditedAmount: convertMinor(share.amount, share.currency, target, rates),
    creditedCurrency: target,
  };
}
