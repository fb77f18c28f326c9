import { roundMinor } from './money.js';

/** Units of each currency that one US dollar buys. */
export type RateTable = Readonly<Record<string, number>>;

export class MissingRateError extends Error {
  constructor(readonly currency: string) {
    super(`No exchange rate for ${currency}; set one with \`openalerts rates set ${currency} <per-USD>\`.`);
  }
}

/** Converts minor units between currencies through USD, rounded half-up to a minor unit. */
export function convertMinor(amountMinor: number, from: string, to: string, rates: RateTable): number {
  if (from === to) return amountMinor;
  const fromRate = rates[from];
  const toRate = rates[to];
  if (!fromRate) throw new MissingRateError(from);
  if (!toRate) throw new MissingRateError(to);
  return roundMinor((amountMinor * toRate) / fromRate);
}

/** The rate used for a conversion, `to` units per `from` unit, for the ledger. */
export function crossRate(from: string, to: string, rates: RateTable): number {
  if (from === to) return 1;
  const fromRate = rates[from];
  const toRate = rates[to];
  if (!fromRate) throw new MissingRateError(from);
  if (!toRate) throw new MissingRateError(to);
  return toRate / fromRate;
}
