import { Type, type Static, type TSchema } from 'typebox';
import { stringEnum } from '../../api/schemas.js';
import { INPUT_CURRENCIES, LOCALES } from '../../domain/currency.js';
import { clearable, flag, httpUrl, money } from '../merchants/signed-input.js';
import { MAX_TIMESTAMP, MERCHANDISE_LIMITS } from './merchandise.input.js';

/**
 * Merchandise API schemas (spec 4.4–4.7): the OpenAPI document and the validator
 * (merchants/signed-input.ts, after the signature check) both read these. Empty values count as
 * not given, so for a required field they fail as missing and a clearable field (`url`, `img_url`,
 * `end_at_ts`) sent empty is cleared.
 */

const nullable = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });

export const SignatureField = Type.String({
  description: 'Lowercase hex SHA-256 of every other parameter value (strings as received, nested values flattened) sorted (plain code-unit order or PHP `sort()` order: either is accepted), concatenated without a separator, followed by the client secret.',
});

const titleText = Type.String({ maxLength: MERCHANDISE_LIMITS.title });
const Title = Type.Object(Object.fromEntries(LOCALES.map((locale) => [locale, locale === 'en_US' ? titleText : Type.Optional(titleText)])), {
  additionalProperties: false,
  description: `Titles keyed by locale (the properties listed), \`en_US\` required, each at most ${MERCHANDISE_LIMITS.title} characters. Forms and multipart send them as \`title[en_US]=…\`.`,
});

const merchandiseFields = {
  title: Title,
  is_active: Type.Optional(flag('1 makes the merchandise available for purchase; default 0.')),
  is_percentage: Type.Optional(flag('0: `price_user` / `price_service` are amounts in `currency` per item; 1: percentages of the sale `amount` (at most 100). Default 0.')),
  currency: stringEnum(INPUT_CURRENCIES, { description: 'Currency revenue is calculated in.' }),
  price_user: money('Streamer revenue per sale, at most two decimals.'),
  price_service: money('Service revenue per sale, at most two decimals.'),
  url: Type.Optional(
    clearable(
      httpUrl(
        MERCHANDISE_LIMITS.url,
        `Merchandise page, an http(s) URL of at most ${MERCHANDISE_LIMITS.url} characters; may contain \`{user_id}\` and \`{user_merchandise_promocode}\`. Empty clears it.`,
      ),
    ),
  ),
  img_url: Type.Optional(clearable(httpUrl(MERCHANDISE_LIMITS.url, `Image, an http(s) URL of at most ${MERCHANDISE_LIMITS.url} characters. Empty clears it.`))),
  end_at_ts: Type.Optional(clearable(Type.Integer({ minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix time (seconds) when the merchandise becomes inactive. Empty clears it.' }))),
  signature: SignatureField,
};

const identifierFields = {
  merchant_identifier: Type.String({ maxLength: 255, description: 'Your merchant’s identifier in the service; one of your application’s merchants.' }),
  merchandise_identifier: Type.String({ maxLength: MERCHANDISE_LIMITS.identifier, description: `Your id of the merchandise, at most ${MERCHANDISE_LIMITS.identifier} characters.` }),
};

/** 4.4: everything the spec marks required. */
export const CreateMerchandiseBody = Type.Object({ ...identifierFields, ...merchandiseFields });

const { signature, ...updatable } = { ...identifierFields, ...merchandiseFields };

/** 4.5: a partial update, only `signature` required. */
export const UpdateMerchandiseBody = Type.Object({ ...Type.Partial(Type.Object(updatable)).properties, signature });

/** 4.6: the identifiers come from the path (and are not signed). */
export const UpsertMerchandiseBody = Type.Object(merchandiseFields);

/** What any of the three bodies may set. */
export type MerchandiseBody = Static<typeof UpdateMerchandiseBody>;

export const MerchandiseIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The service’s merchandise id.' }) });

export const MerchandiseIdentifierParams = Type.Object({
  merchant_identifier: Type.String({ maxLength: 255, description: 'Your merchant’s identifier in the service (not signed).' }),
  merchandise_identifier: Type.String({ maxLength: MERCHANDISE_LIMITS.identifier, description: 'Your id of the merchandise (not signed).' }),
});

export const PromocodeQuery = Type.Object({
  promocode: Type.String({ maxLength: 255, description: 'The streamer’s advertising promocode (any case).' }),
  signature: SignatureField,
});

/** Spec §2 "Merchandise". */
export const MerchandiseResource = Type.Object({
  id: Type.Integer(),
  merchant: Type.Object({ identifier: Type.String(), name: Type.String() }),
  identifier: Type.String(),
  title: Type.Record(Type.String(), Type.String(), { description: 'Titles keyed by locale.' }),
  is_active: Type.Integer({ minimum: 0, maximum: 1, description: '0 once `end_at` has passed.' }),
  is_percentage: Type.Integer({ minimum: 0, maximum: 1 }),
  currency: Type.String(),
  price_user: Type.Number(),
  price_service: Type.Number(),
  url: nullable(Type.String(), 'Null when unset.'),
  img_url: nullable(Type.String(), 'Null when unset.'),
  end_at: nullable(Type.String(), '`YYYY-MM-DD HH:MM:SS`, UTC; null when unset.'),
});

export const MerchandiseReply = Type.Object({ data: MerchandiseResource });

export const PromocodeReply = Type.Object({ data: Type.Object({ user_id: Type.Integer() }) });
