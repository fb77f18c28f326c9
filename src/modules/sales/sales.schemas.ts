import { Type, type Static } from 'typebox';
import { stringEnum } from '../../api/schemas.js';
import { INPUT_CURRENCIES } from '../../domain/currency.js';
import { MERCHANDISE_LIMITS } from '../merchandise/merchandise.input.js';
import { money } from '../merchants/signed-input.js';
import { SignatureField } from '../merchandise/merchandise.schemas.js';
import { SALE_LIMITS } from './sales.input.js';

/** Spec 4.8 body: the OpenAPI document and the validator (merchants/signed-input.ts, after the signature check) both read it. */
export const SaleBody = Type.Object({
  user_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The streamer the sale refers to (see GET /merchandise/user).' }),
  external_id: Type.String({ maxLength: SALE_LIMITS.externalId, description: `Your sale id, unique per merchant, at most ${SALE_LIMITS.externalId} characters.` }),
  merchant_identifier: Type.String({ maxLength: 255, description: 'Your merchant’s identifier in the service.' }),
  merchandise_identifier: Type.String({ maxLength: MERCHANDISE_LIMITS.identifier, description: 'Your id of the merchandise bought.' }),
  amount: money('Grand total of the sale, at most two decimals.'),
  currency: stringEnum(INPUT_CURRENCIES, { description: 'Currency of `amount`.' }),
  bought_amount: Type.Optional(Type.Integer({ minimum: 1, maximum: SALE_LIMITS.boughtAmount, default: 1, description: 'Items bought; default 1.' })),
  username: Type.Optional(Type.String({ maxLength: SALE_LIMITS.username, description: 'Customer name.' })),
  message: Type.Optional(Type.String({ maxLength: SALE_LIMITS.message, description: 'Customer message.' })),
  signature: SignatureField,
});

export type SaleBody = Static<typeof SaleBody>;

const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** Spec §2 "Merchandise sale alert". */
export const SaleAlertResource = Type.Object({
  id: Type.Integer(),
  name: stringEnum(['merchandise-sale']),
  external_id: Type.String(),
  username: nullableString('Null when unknown.'),
  message: nullableString('Null when none was given.'),
  amount: Type.Number(),
  currency: Type.String(),
  bought_amount: Type.Integer(),
  is_shown: Type.Integer({ minimum: 0, maximum: 1 }),
  created_at: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`, UTC.' }),
  shown_at: nullableString('Null until displayed.'),
});

export const SaleReply = Type.Object({ data: SaleAlertResource });
