import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { msg, UnauthenticatedError, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { findStreamer } from '../accounts/accounts.repository.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import { insertCustomAlert } from './custom-alerts.repository.js';
import { toCustomAlertResource } from './custom-alerts.resource.js';
import { CUSTOM_ALERT_LIMITS, type CustomAlertResource } from './custom-alerts.schemas.js';

export interface NewCustomAlert {
  userId: number;
  /** The application sending it (the token's client). */
  clientId: number;
  /** Empty strings and null mean "not given". */
  externalId?: string | null;
  header?: string | null;
  message?: string | null;
  isShown?: number;
  imageUrl?: string | null;
  soundUrl?: string | null;
}

/** The widget payload: the resource plus `name` and `reason` (documented values: both "custom"). */
export type CustomAlertEvent = CustomAlertResource & { name: 'custom'; reason: 'custom' };

const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * A URL a browser source can load: absolute http(s), a real host (DNS labels, IPv4 or IPv6), no
 * credentials, and nothing WHATWG parsing would silently repair (whitespace, control characters,
 * backslashes). Null when fine, else the reason (urlMessage says it).
 */
export function httpUrlProblem(value: string): UrlProblem | null {
  if (!/^https?:\/\/[^/]/i.test(value) || /[\s\u0000-\u001f\u007f\\]/u.test(value)) return 'url';
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'url';
  }
  if (parsed.username || parsed.password) return 'credentials';
  const host = parsed.hostname;
  if (host.startsWith('[')) return null; // the parser has validated the IPv6 literal
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!name || name.length > 253 || !name.split('.').every((label) => HOST_LABEL.test(label))) return 'host';
  return null;
}

export type UrlProblem = 'url' | 'credentials' | 'host';

/** "The {label} must be a valid http or https URL." and the like. */
export function urlMessage(label: string | Message, problem: UrlProblem): Message {
  if (problem === 'credentials') return msg('err.url.credentials', { label });
  if (problem === 'host') return msg('err.url.host', { label });
  return msg('err.url.invalid', { label });
}

const given = (value: string | null | undefined): string | null => (value === undefined || value === null || value === '' ? null : value);

function validate(input: NewCustomAlert): FieldMessages {
  const errors: FieldMessages = {};
  const checkLength = (field: keyof typeof CUSTOM_ALERT_LIMITS, value: string | null) => {
    // Code points, as the HTTP schema (AJV) and Laravel's mb_strlen count them.
    if (value !== null && [...value].length > CUSTOM_ALERT_LIMITS[field]) {
      errors[field] = [msg('err.field.max_chars', { field, max: CUSTOM_ALERT_LIMITS[field] })];
    }
  };
  checkLength('external_id', given(input.externalId));
  checkLength('header', given(input.header));
  checkLength('message', given(input.message));
  for (const [field, value] of [['image_url', given(input.imageUrl)], ['sound_url', given(input.soundUrl)]] as const) {
    checkLength(field, value);
    const problem = value === null || errors[field] ? null : httpUrlProblem(value);
    if (problem) errors[field] = [urlMessage(`${field} field`, problem)];
  }
  if (input.isShown !== undefined && input.isShown !== 0 && input.isShown !== 1) errors.is_shown = [msg('err.field.selected_invalid', { field: 'is_shown' })];
  return errors;
}

/**
 * Stores a custom alert and queues it for the streamer's alerts widget in one transaction (architecture.md convention 1:
 * outbox): the alert exists if and only if its event does. A taken external_id — also when two
 * requests race for it — is a validation error on `external_id`, never a 500.
 *
 * The event is queued whatever `is_shown` says; the payload carries it, and a widget skips alerts
 * already shown.
 */
export async function createCustomAlert(db: Kysely<DB>, input: NewCustomAlert): Promise<CustomAlertResource> {
  const errors = validate(input);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const isShown = input.isShown ?? 0;
  try {
    return await db.transaction().execute(async (tx) => {
      const user = await findStreamer(tx, input.userId);
      // The token outlived its user (cached verification): the token is what is wrong.
      if (!user || !user.is_active) throw new UnauthenticatedError('invalid_token');
      const now = Date.now();
      const row = await insertCustomAlert(tx, {
        user_id: input.userId,
        client_id: input.clientId,
        external_id: given(input.externalId),
        header: given(input.header),
        message: given(input.message),
        image_url: given(input.imageUrl),
        sound_url: given(input.soundUrl),
        is_shown: isShown,
        created_at: now,
        shown_at: isShown ? now : null,
      });
      const resource = toCustomAlertResource(row);
      const event: CustomAlertEvent = { ...resource, name: 'custom', reason: 'custom' };
      await enqueueEvent(tx, { type: 'custom_alert.created', userId: input.userId, payload: event });
      return resource;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'external_id')) throw ValidationError.field('external_id', msg('err.field.taken', { field: 'external_id' }));
    throw err;
  }
}
