import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { WebhooksConfig } from '../../config/config.js';
import type { DB } from '../../db/schema.js';
import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import { MAX_PAGE } from '../../http/pagination.js';
import { ForbiddenError, InsufficientScopeError, msg, NotFoundError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { encryptSecret } from '../../security/crypto.js';
import { generateWebhookSecret, webhookHeaders } from '../../security/standard-webhooks.js';
import { checkEndpointUrl, postJson, type Resolver } from './endpoint.js';
import { isWebhookEvent, REQUIREMENTS, WEBHOOK_EVENTS, type WebhookEvent } from './webhook-events.js';
import { findAppById } from '../apps/apps.repository.js';
import { grantedScopes, streamersOfOwnedApps, type OwnedAppStreamer } from '../../oauth/oauth.repository.js';
import * as repo from './webhooks.repository.js';
import type { DeliveryRow, SubscriptionRow } from './webhooks.table.js';

/** What the service needs from the running app. */
export interface WebhookDeps {
  db: Kysely<DB>;
  config: WebhooksConfig;
  encryptionKey: Buffer;
  resolver: Resolver;
}

/** Subscriptions one application may hold for one streamer (each is a queue some node works on). */
export const MAX_SUBSCRIPTIONS_PER_GRANT = 20;

/** A subscription as the API returns it (OpenAlerts extension); `secret` only when created or rotated. */
export interface WebhookResource {
  id: number;
  url: string;
  events: string[];
  status: SubscriptionRow['status'];
  status_reason: SubscriptionRow['status_reason'];
  created_at: string;
  status_changed_at: string | null;
  secret?: string;
}

export function toWebhookResource(row: SubscriptionRow, secret?: string): WebhookResource {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events),
    status: row.status,
    status_reason: row.status_reason,
    created_at: formatDateTime(row.created_at),
    status_changed_at: formatNullableDateTime(row.status_at),
    ...(secret === undefined ? {} : { secret }),
  };
}

/** Who asks: the application and the streamer of a bearer token, and what the token may do. */
export interface Caller {
  appId: number;
  userId: number;
  scopes: readonly string[];
}

function validateInput(input: { url?: unknown; events?: unknown }, allowHttp: boolean): { url: string; events: WebhookEvent[] } {
  const errors: FieldMessages = {};
  let url = '';
  if (typeof input.url !== 'string' || input.url.trim() === '') errors.url = [msg('err.field.required', { field: 'url' })];
  else {
    const checked = checkEndpointUrl(input.url.trim(), { allowLoopback: allowHttp });
    if ('error' in checked) errors.url = [msg('err.webhook.url', { reason: checked.error })];
    else url = checked.url.href;
  }
  const rawEvents = typeof input.events === 'string' ? [input.events] : input.events;
  let events: WebhookEvent[] = [];
  if (!Array.isArray(rawEvents) || rawEvents.length === 0) errors.events = [msg('err.webhook.no_events')];
  else {
    const unknown = rawEvents.filter((e) => !isWebhookEvent(e));
    if (unknown.length > 0) errors.events = [msg('err.webhook.unknown_event', { event: JSON.stringify(String(unknown[0])).slice(0, 80), list: WEBHOOK_EVENTS.join(', ') })];
    else events = [...new Set(rawEvents as WebhookEvent[])];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return { url, events };
}

/** 403 unless the token's scopes and the application's rights cover every event asked for. */
async function checkRights(db: Kysely<DB>, caller: Caller, events: WebhookEvent[]): Promise<void> {
  for (const event of events) {
    const need = REQUIREMENTS[event];
    if ('scopes' in need && !need.scopes.some((scope) => caller.scopes.includes(scope))) throw new InsufficientScopeError(need.scopes[0]);
    if ('merchandiseAccess' in need) {
      const app = await findAppById(db, caller.appId);
      if (!app?.merchandise_access) throw new ForbiddenError(msg('err.webhook.merchandise_only', { event }));
    }
  }
}

/**
 * Proves the endpoint wants our deliveries (as Twitch EventSub's `webhook_callback_verification`):
 * a signed `webhook.challenge` message whose random `challenge` the endpoint must send back, as
 * the response body or as `{"challenge": "…"}`. A URL pointing at someone else's server fails it.
 */
async function verifyEndpoint(deps: WebhookDeps, url: string, secret: string): Promise<void> {
  const challenge = randomBytes(24).toString('base64url');
  const id = `msg_challenge_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify({ type: 'webhook.challenge', timestamp: new Date().toISOString(), data: { challenge } });
  const result = await postJson(url, webhookHeaders([secret], id, Math.floor(Date.now() / 1000), body), body, {
    timeoutMs: deps.config.timeoutMs,
    policy: { allowLoopback: deps.config.allowHttp },
    resolver: deps.resolver,
    wholeBody: true,
  });
  if (result.statusCode === null) throw ValidationError.field('url', msg('err.webhook.challenge_unreached', { reason: result.error ?? 'no response' }));
  if (result.statusCode < 200 || result.statusCode >= 300) throw ValidationError.field('url', msg('err.webhook.challenge_status', { status: result.statusCode }));
  if (echoed(result.excerpt ?? '') !== challenge) throw ValidationError.field('url', msg('err.webhook.challenge_body'));
}

function echoed(body: string): string {
  const text = body.trim();
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && typeof parsed.challenge === 'string') return parsed.challenge;
    if (typeof parsed === 'string') return parsed;
  } catch {
    // Not JSON: the raw body is the answer.
  }
  return text;
}

export async function createSubscription(deps: WebhookDeps, caller: Caller, input: { url?: unknown; events?: unknown }): Promise<WebhookResource> {
  const { url, events } = validateInput(input, deps.config.allowHttp);
  await checkRights(deps.db, caller, events);
  const existing = await repo.subscriptionsOfGrant(deps.db, caller.appId, caller.userId);
  if (existing.length >= MAX_SUBSCRIPTIONS_PER_GRANT) throw ValidationError.field('url', msg('err.webhook.too_many', { max: MAX_SUBSCRIPTIONS_PER_GRANT }));
  const secret = generateWebhookSecret();
  await verifyEndpoint(deps, url, secret);
  const row = await repo.insertSubscription(deps.db, {
    app_id: caller.appId,
    user_id: caller.userId,
    url,
    events: JSON.stringify(events),
    secret_sealed: encryptSecret(deps.encryptionKey, secret),
    now: Date.now(),
  });
  return toWebhookResource(row, secret);
}

/** The caller's own subscription, or 404 (another app's or streamer's looks the same as none). */
async function ownSubscription(db: Kysely<DB>, caller: Caller, id: unknown): Promise<SubscriptionRow> {
  const subId = typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
  const row = typeof subId === 'number' && Number.isSafeInteger(subId) ? await repo.findSubscription(db, subId) : undefined;
  if (!row || row.app_id !== caller.appId || row.user_id !== caller.userId || row.status === 'removed') throw new NotFoundError(msg('err.webhook.not_found'));
  return row;
}

export async function listSubscriptions(db: Kysely<DB>, caller: Caller): Promise<WebhookResource[]> {
  return (await repo.subscriptionsOfGrant(db, caller.appId, caller.userId)).map((row) => toWebhookResource(row));
}

export async function getSubscription(db: Kysely<DB>, caller: Caller, id: unknown): Promise<WebhookResource> {
  return toWebhookResource(await ownSubscription(db, caller, id));
}

export async function deleteSubscription(db: Kysely<DB>, caller: Caller, id: unknown): Promise<WebhookResource> {
  const row = await ownSubscription(db, caller, id);
  const now = Date.now();
  await db.transaction().execute((tx) => repo.removeSubscription(tx, row.id, 'deleted_by_app', now));
  return toWebhookResource({ ...row, status: 'removed', status_reason: 'deleted_by_app', status_at: now });
}

/**
 * A new secret, shown once; the old one keeps signing (a second `v1,` signature) for the overlap,
 * so a receiver can switch whenever it likes within it.
 */
export async function rotateSubscriptionSecret(deps: WebhookDeps, caller: Caller, id: unknown): Promise<WebhookResource> {
  const row = await ownSubscription(deps.db, caller, id);
  const secret = generateWebhookSecret();
  const now = Date.now();
  await repo.rotateSecret(deps.db, row.id, encryptSecret(deps.encryptionKey, secret), row.secret_sealed, now + deps.config.secretOverlapMs, now);
  return toWebhookResource(row, secret);
}

// ---- The delivery log (dashboard) ----------------------------------------------------------------

export interface DeliveryView {
  delivery: DeliveryRow;
  attempts: repo.LoggedAttempt[];
}

export async function deliveryLog(db: Kysely<DB>, subscriptionId: number, limit = 20): Promise<DeliveryView[]> {
  const deliveries = await repo.deliveriesOf(db, subscriptionId, limit);
  const attempts = await repo.attemptsOf(db, deliveries.map((d) => d.id));
  return deliveries.map((delivery) => ({ delivery, attempts: attempts.filter((a) => a.delivery_id === delivery.id) }));
}

/**
 * Sends a logged message again: a new delivery at the end of the subscription's queue with the same
 * body and `webhook-id` (receivers that de-duplicate by id see a repeat, which it is).
 */
export async function redeliver(db: Kysely<DB>, subscriptionId: number, deliveryId: number): Promise<DeliveryRow> {
  const delivery = await repo.findDelivery(db, deliveryId);
  const sub = await repo.findSubscription(db, subscriptionId);
  if (!delivery || !sub || delivery.subscription_id !== sub.id) throw new NotFoundError(msg('err.webhook.delivery_not_found'));
  if (sub.status === 'removed') throw ValidationError.field('delivery', msg('err.webhook.removed'));
  const now = Date.now();
  return db.transaction().execute((tx) =>
    repo.insertDelivery(tx, { subscription_id: sub.id, message_id: delivery.message_id, event_type: delivery.event_type, body: delivery.body, status: 'pending', next_attempt_at: now, window_start: now, created_at: now }),
  );
}

// ---- The delivery log (API) ----------------------------------------------------------------------

/** A delivery as GET /webhooks/{id}/deliveries returns it, with its attempts. */
export interface DeliveryResource {
  id: number;
  message_id: string;
  event_type: string;
  status: DeliveryRow['status'];
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
  attempts: { attempted_at: string; status_code: number | null; error: string | null; latency_ms: number; response_excerpt: string | null }[];
}

export function toDeliveryResource(d: DeliveryRow, attempts: repo.LoggedAttempt[]): DeliveryResource {
  return {
    id: d.id,
    message_id: d.message_id,
    event_type: d.event_type,
    status: d.status,
    created_at: formatDateTime(d.created_at),
    next_attempt_at: d.status === 'pending' ? formatDateTime(d.next_attempt_at) : null,
    finished_at: formatNullableDateTime(d.finished_at),
    attempts: attempts.map((a) => ({ attempted_at: formatDateTime(a.attempted_at), status_code: a.status_code, error: a.error, latency_ms: a.latency_ms, response_excerpt: a.response_excerpt })),
  };
}

const DELIVERY_STATUSES: readonly DeliveryRow['status'][] = ['pending', 'delivered', 'failed', 'cancelled'];

/** `?page=&status=` of the delivery log as received (the route leaves validation to us: 400 in the compatibility.md §1 shape). */
export function deliveryQuery(raw: unknown): { page: number; status: DeliveryRow['status'] | null } {
  const query = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const errors: FieldMessages = {};
  let page = 1;
  if (query.page !== undefined) {
    if (typeof query.page === 'string' && /^[1-9][0-9]{0,6}$/.test(query.page) && Number(query.page) <= MAX_PAGE) page = Number(query.page);
    else errors.page = [msg('err.field.whole_between', { label: 'page', min: 1, max: MAX_PAGE })];
  }
  let status: DeliveryRow['status'] | null = null;
  if (query.status !== undefined) {
    if (typeof query.status === 'string' && (DELIVERY_STATUSES as readonly string[]).includes(query.status)) status = query.status as DeliveryRow['status'];
    else errors.status = [msg('err.field.one_of', { label: 'status', list: DELIVERY_STATUSES.join(', ') })];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return { page, status };
}

/** One page of the caller's subscription's delivery log, newest first (404: not theirs). */
export async function listDeliveries(
  db: Kysely<DB>,
  caller: Caller,
  id: unknown,
  query: { page: number; perPage: number; status: DeliveryRow['status'] | null },
): Promise<{ data: DeliveryResource[]; total: number }> {
  const sub = await ownSubscription(db, caller, id);
  const { rows, total } = await repo.deliveryPage(db, sub.id, query.status, query.perPage, (query.page - 1) * query.perPage);
  const attempts = await repo.attemptsOf(db, rows.map((d) => d.id));
  return { data: rows.map((d) => toDeliveryResource(d, attempts.filter((a) => a.delivery_id === d.id))), total };
}

/** Queues a logged message of the caller's subscription again; answers the new delivery. */
export async function redeliverForCaller(db: Kysely<DB>, caller: Caller, id: unknown, deliveryId: unknown): Promise<DeliveryResource> {
  const sub = await ownSubscription(db, caller, id);
  const delivery = typeof deliveryId === 'string' && /^\d{1,15}$/.test(deliveryId) ? Number(deliveryId) : 0;
  return toDeliveryResource(await redeliver(db, sub.id, delivery), []);
}

export async function reenable(db: Kysely<DB>, subscriptionId: number): Promise<void> {
  await db.transaction().execute((tx) => repo.reenableSubscription(tx, subscriptionId, Date.now()));
}

// ---- The dashboard: the streamer and the application owner --------------------------------------

/** A subscription on the dashboard, with the newest deliveries of its log. */
export interface DashboardSubscription {
  subscription: repo.SubscriptionWithApp;
  events: string[];
  log: DeliveryView[];
}

async function withLogs(db: Kysely<DB>, rows: repo.SubscriptionWithApp[], logSize: number): Promise<DashboardSubscription[]> {
  return Promise.all(rows.map(async (subscription) => ({ subscription, events: JSON.parse(subscription.events) as string[], log: await deliveryLog(db, subscription.id, logSize) })));
}

/**
 * What the dashboard shows an account: the subscriptions applications made for it as a streamer
 * (the events are theirs), and those of the applications it owns, for any streamer (the endpoints
 * are theirs to fix). Removed ones stay listed, with why, for their log.
 */
export async function dashboardWebhooks(db: Kysely<DB>, userId: number, logSize = 10): Promise<{ forMe: DashboardSubscription[]; ofMyApps: DashboardSubscription[] }> {
  const [forMe, ofMyApps] = await Promise.all([repo.subscriptionsForStreamer(db, userId), repo.subscriptionsOfOwnedApps(db, userId)]);
  return { forMe: await withLogs(db, forMe, logSize), ofMyApps: await withLogs(db, ofMyApps, logSize) };
}

/** A subscription this account may manage (its streamer or its application's owner), or 404. */
async function manageable(db: Kysely<DB>, userId: number, subscriptionId: number): Promise<{ row: SubscriptionRow; asStreamer: boolean }> {
  const row = subscriptionId > 0 ? await repo.findSubscription(db, subscriptionId) : undefined;
  if (row) {
    if (row.user_id === userId) return { row, asStreamer: true };
    const app = await findAppById(db, row.app_id);
    if (app?.owner_id === userId) return { row, asStreamer: false };
  }
  throw new NotFoundError(msg('err.webhook.not_found'));
}

export async function reenableFromDashboard(db: Kysely<DB>, userId: number, subscriptionId: number): Promise<void> {
  const { row } = await manageable(db, userId, subscriptionId);
  await reenable(db, row.id);
}

export async function removeFromDashboard(db: Kysely<DB>, userId: number, subscriptionId: number): Promise<void> {
  const { row, asStreamer } = await manageable(db, userId, subscriptionId);
  if (row.status === 'removed') return;
  await db.transaction().execute((tx) => repo.removeSubscription(tx, row.id, asStreamer ? 'deleted_by_streamer' : 'deleted_by_app', Date.now()));
}

export async function redeliverFromDashboard(db: Kysely<DB>, userId: number, subscriptionId: number, deliveryId: number): Promise<void> {
  const { row } = await manageable(db, userId, subscriptionId);
  await redeliver(db, row.id, deliveryId);
}

/** The streamers who authorized one of `ownerId`'s applications: whom the dashboard's form can subscribe for. */
export function subscribableStreamers(db: Kysely<DB>, ownerId: number): Promise<OwnedAppStreamer[]> {
  return streamersOfOwnedApps(db, ownerId);
}

/**
 * The dashboard's subscribe form: the owner of an application subscribes it for a streamer who
 * authorized it, with the rights of that authorization — what a token of the grant could do through
 * the API (the challenge included). Another's application, or a streamer without a live grant: 404.
 */
export async function subscribeFromDashboard(deps: WebhookDeps, ownerId: number, input: { clientId: number; userId: number; url: unknown; events: unknown }): Promise<WebhookResource> {
  const app = input.clientId > 0 ? await findAppById(deps.db, input.clientId) : undefined;
  const scopes = app && app.owner_id === ownerId && input.userId > 0 ? await grantedScopes(deps.db, input.userId, input.clientId) : null;
  if (!app || scopes === null) throw new NotFoundError(msg('err.webhook.not_found'));
  return createSubscription(deps, { appId: app.id, userId: input.userId, scopes }, { url: input.url, events: input.events });
}

/**
 * The dashboard's rotation: a new secret for a subscription of one of `ownerId`'s applications,
 * shown once. Only the application's owner: the secret is the application's, not the streamer's.
 */
export async function rotateFromDashboard(deps: WebhookDeps, ownerId: number, subscriptionId: number): Promise<WebhookResource> {
  const row = subscriptionId > 0 ? await repo.findSubscription(deps.db, subscriptionId) : undefined;
  const app = row && row.status !== 'removed' ? await findAppById(deps.db, row.app_id) : undefined;
  if (!row || app?.owner_id !== ownerId) throw new NotFoundError(msg('err.webhook.not_found'));
  return rotateSubscriptionSecret(deps, { appId: row.app_id, userId: row.user_id, scopes: [] }, subscriptionId);
}
