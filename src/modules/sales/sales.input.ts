import { toMinorUnits } from '../merchants/signed-input.js';
import type { SaleBody } from './sales.schemas.js';

/** Spec 4.8 / §8. Username and message have no limit in the spec; these keep alerts displayable. */
export const SALE_LIMITS = { externalId: 32, username: 255, message: 300, boughtAmount: 100_000 } as const;

export interface SaleInput {
  userId: number;
  externalId: string;
  merchantIdentifier: string;
  merchandiseIdentifier: string;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  boughtAmount: number;
  username: string | null;
  message: string | null;
}

/** A validated 4.8 body (sales.schemas.ts) in the service's terms, defaults applied. */
export function toSaleInput(body: SaleBody): SaleInput {
  return {
    userId: body.user_id,
    externalId: body.external_id,
    merchantIdentifier: body.merchant_identifier,
    merchandiseIdentifier: body.merchandise_identifier,
    amount: toMinorUnits(body.amount),
    currency: body.currency,
    boughtAmount: body.bought_amount ?? 1,
    username: body.username ?? null,
    message: body.message ?? null,
  };
}
