/**
 * Rates shipped with the service so conversions work with no set-up: approximate mid-market rates
 * (units per US dollar) as of the date below. Operators set real ones with `openalerts rates set`.
 * Migration 0001 seeds a frozen copy of these; a change here reaches existing databases only through
 * a new migration (the storage contract test holds the two equal).
 */
export const DEFAULT_RATES_AS_OF = '2025-11-01';

export const DEFAULT_RATES: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.866,
  RUB: 81.0,
  BYN: 3.38,
  KZT: 525.0,
  UAH: 42.0,
  BRL: 5.38,
  TRY: 42.1,
};
