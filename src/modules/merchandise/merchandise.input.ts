import { toMinorUnits } from '../merchants/signed-input.js';
import type { MerchandiseBody } from './merchandise.schemas.js';

/** Spec 4.4 / §8 limits. */
export const MERCHANDISE_LIMITS = { identifier: 16, title: 1024, url: 128 } as const;
/** Latest `end_at_ts` accepted: 9999-12-31 23:59:59 UTC. */
export const MAX_TIMESTAMP = 253_402_300_799;
/** Percentages are stored in hundredths: 100 % = 10 000. */
export const HUNDRED_PERCENT = 10_000;

/** What a 4.4/4.5/4.6 body sets; undefined = not sent, null = cleared. */
export interface MerchandiseInput {
  merchantIdentifier?: string;
  identifier?: string;
  title?: Record<string, string>;
  isActive?: 0 | 1;
  isPercentage?: 0 | 1;
  currency?: string;
  /** Minor units, or hundredths of a percent. */
  priceUser?: number;
  priceService?: number;
  url?: string | null;
  imgUrl?: string | null;
  /** Epoch ms. */
  endAt?: number | null;
}

/**
 * A validated merchandise body (merchandise.schemas.ts) in the service's terms: prices in minor
 * units (or hundredths of a percent), `end_at_ts` in ms. Only what was sent is set.
 */
export function toMerchandiseInput(body: MerchandiseBody): MerchandiseInput {
  const input: MerchandiseInput = {};
  if (body.merchant_identifier !== undefined) input.merchantIdentifier = body.merchant_identifier;
  if (body.merchandise_identifier !== undefined) input.identifier = body.merchandise_identifier;
  if (body.title !== undefined) input.title = body.title as Record<string, string>;
  if (body.is_active !== undefined) input.isActive = body.is_active as 0 | 1;
  if (body.is_percentage !== undefined) input.isPercentage = body.is_percentage as 0 | 1;
  if (body.currency !== undefined) input.currency = body.currency;
  if (body.price_user !== undefined) input.priceUser = toMinorUnits(body.price_user);
  if (body.price_service !== undefined) input.priceService = toMinorUnits(body.price_service);
  if (body.url !== undefined) input.url = body.url;
  if (body.img_url !== undefined) input.imgUrl = body.img_url;
  if (body.end_at_ts !== undefined) input.endAt = body.end_at_ts === null ? null : body.end_at_ts * 1000;
  return input;
}
