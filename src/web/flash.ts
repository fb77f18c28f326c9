import { hkdfSync } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decryptSecret, encryptSecret, sha256Hex } from '../security/crypto.js';
import { cookieNames, sessionToken } from './session.js';

/**
 * One-time messages across POST → 303 → GET (the post/redirect/get pattern): a form that created
 * or changed something answers with a redirect, so reloading the page it lands on repeats
 * nothing, and the page shows what happened once. A new application's client secret travels this
 * way too: it must be shown exactly once and never again on reload.
 *
 * The flash is an AES-256-GCM sealed, HttpOnly cookie (key derived from the cookie secret), bound
 * to the browser's session and valid for two minutes, cleared by the page that shows it. A cookie
 * rather than a server-side row: the GET may reach another node, and nothing needs to be stored or
 * swept for a message that lives one redirect.
 */
export interface Flash {
  /** Already in the page's language. */
  notice?: string;
  error?: string;
  /** A client secret to show once (a created application, a rotated secret). */
  secret?: { clientId: number; value: string };
  /** A webhook subscription's signing secret to show once (subscribed or rotated on the dashboard). */
  webhookSecret?: { subscriptionId: number; value: string };
}

interface SealedFlash {
  /** The session it was set for (SHA-256 of the session token). */
  s: string;
  /** Expiry, epoch ms. */
  e: number;
  f: Flash;
}

const TTL_MS = 120_000;

const keys = new WeakMap<object, Buffer>();
function flashKey(request: FastifyRequest): Buffer {
  const secrets = request.server.ctx.secrets;
  let key = keys.get(secrets);
  if (!key) keys.set(secrets, (key = Buffer.from(hkdfSync('sha256', secrets.cookieSecret, 'openalerts', 'flash-cookie', 32))));
  return key;
}

function binding(request: FastifyRequest): string {
  return sha256Hex(sessionToken(request) ?? '');
}

function flashCookie(request: FastifyRequest): { name: string; options: { path: string; httpOnly: true; sameSite: 'lax'; secure: boolean } } {
  const names = cookieNames(request.server.ctx.config);
  return { name: names.secure ? '__Host-oa_flash' : 'oa_flash', options: { path: '/', httpOnly: true, sameSite: 'lax', secure: names.secure } };
}

/** Sets the message the next page shows; answer with a 303 redirect to that page. */
export function setFlash(request: FastifyRequest, reply: FastifyReply, flash: Flash): void {
  const sealed: SealedFlash = { s: binding(request), e: Date.now() + TTL_MS, f: flash };
  const { name, options } = flashCookie(request);
  reply.setCookie(name, encryptSecret(flashKey(request), JSON.stringify(sealed)), { ...options, maxAge: TTL_MS / 1000 });
}

/**
 * The message set for this session by the previous request, once: the cookie is cleared in the
 * same answer. Nothing (an empty flash) when there is none, it expired, it was set for another
 * session, or the cookie is not one we sealed.
 */
export function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash {
  const { name, options } = flashCookie(request);
  const value = request.cookies[name];
  if (value === undefined) return {};
  reply.clearCookie(name, options);
  let sealed: SealedFlash;
  try {
    sealed = JSON.parse(decryptSecret(flashKey(request), value)) as SealedFlash;
  } catch {
    // A cookie the browser altered or one sealed with an earlier key: there is no message to show.
    return {};
  }
  if (sealed.s !== binding(request) || !(sealed.e > Date.now()) || typeof sealed.f !== 'object' || sealed.f === null) return {};
  return sealed.f;
}

/** Accepted: sets the flash and answers 303 to the page that shows it (`location`, a GET page). */
export function redirectWithFlash(request: FastifyRequest, reply: FastifyReply, location: string, flash: Flash): FastifyReply {
  setFlash(request, reply, flash);
  return reply.redirect(location, 303);
}
