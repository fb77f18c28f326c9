import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, spec v1): the sender signs
 * `<webhook-id>.<webhook-timestamp>.<body>` with HMAC-SHA256 under the secret's key bytes and sends
 * `v1,<base64 signature>` in `webhook-signature`; several signatures are space-separated (a secret
 * being rotated signs with both the new and the old key, so receivers on either verify).
 */

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 24 random bytes (the spec asks for 24–64 bytes). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The key bytes of a `whsec_…` secret (the prefix is not part of the key). */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('A webhook secret starts with whsec_.');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** One `v1,<base64>` signature of a message. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a delivery, signed with every secret given (newest first). */
export function webhookHeaders(secrets: string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signWebhook(s, id, timestamp, body)).join(' '),
  };
}

/** How far a timestamp may be from now (spec: receivers reject older messages against replays). */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

/**
 * Verifies a delivery as a receiver would: one of the `v1` signatures matches, compared in constant
 * time, and the timestamp is within the tolerance. Used by our own tests and documented for apps.
 */
export function verifyWebhook(secret: string, headers: Record<string, string | string[] | undefined>, body: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
