import { FieldReader } from '../merchandise/input-fields.js';
import { MERCHANDISE_LIMITS } from '../merchandise/merchandise.input.js';

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

/** Validates a 4.8 body; throws one ValidationError listing every problem. */
export function readSaleInput(body: Record<string, unknown>): SaleInput {
  const r = new FieldReader(body);
  const input = {
    userId: r.integer('user_id', { required: true, min: 1, max: Number.MAX_SAFE_INTEGER }),
    externalId: r.string('external_id', { required: true, max: SALE_LIMITS.externalId }),
    merchantIdentifier: r.string('merchant_identifier', { required: true, max: 255 }),
    merchandiseIdentifier: r.string('merchandise_identifier', { required: true, max: MERCHANDISE_LIMITS.identifier }),
    amount: r.amount('amount', { required: true }),
    currency: r.currency('currency', { required: true }),
    boughtAmount: r.integer('bought_amount', { min: 1, max: SALE_LIMITS.boughtAmount }) ?? 1,
    username: r.string('username', { max: SALE_LIMITS.username }) ?? null,
    message: r.string('message', { max: SALE_LIMITS.message }) ?? null,
  };
  r.throwIfInvalid();
  return input as SaleInput;
}
