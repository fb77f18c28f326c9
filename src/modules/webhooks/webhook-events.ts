import type { EventType } from '../outbox/events.js';

/**
 * The events an application can subscribe to, and what it needs for each. Streamer-wide events need
 * the OAuth scope of the real-time channel carrying the same data (spec 5.2, §6: donations
 * `oauth-donation-subscribe`, goals `oauth-goal-subscribe`, polls `oauth-poll-subscribe`). Custom
 * alerts and merchandise sales are delivered only for the application's own items: the custom alerts
 * it sent, the sales of its merchants.
 */
export const WEBHOOK_EVENTS = [
  'donation.created',
  'custom_alert.created',
  'merchandise_sale.created',
  'goal.created',
  'goal.updated',
  'goal.finished',
  'poll.created',
  'poll.updated',
  'poll.finished',
  'alert.shown',
] as const satisfies readonly EventType[];

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: unknown): value is WebhookEvent {
  return typeof value === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** What subscribing to an event takes: a scope of the token, or Merchandise API access of the app. */
export type EventRequirement = { scope: string } | { merchandiseAccess: true };

export const REQUIREMENTS: Record<WebhookEvent, EventRequirement> = {
  'donation.created': { scope: 'oauth-donation-subscribe' },
  'custom_alert.created': { scope: 'oauth-custom_alert-store' },
  'merchandise_sale.created': { merchandiseAccess: true },
  'goal.created': { scope: 'oauth-goal-subscribe' },
  'goal.updated': { scope: 'oauth-goal-subscribe' },
  'goal.finished': { scope: 'oauth-goal-subscribe' },
  'poll.created': { scope: 'oauth-poll-subscribe' },
  'poll.updated': { scope: 'oauth-poll-subscribe' },
  'poll.finished': { scope: 'oauth-poll-subscribe' },
  // Which alert was shown and when: donations to any app with the donation scope; a custom alert or a
  // sale only to the application that owns it (see `ownedItem`).
  'alert.shown': { scope: 'oauth-donation-subscribe' },
};

/** An item only its owning application hears about: a custom alert (its sender) or a sale (its merchant's app). */
export type OwnedItem = { kind: 'custom_alert' | 'sale'; id: number };

/** The item of an event that only its owner may receive; null: every subscriber of the streamer may. */
export function ownedItem(type: string, data: Record<string, unknown>): OwnedItem | null {
  const id = Number(data.id);
  if (type === 'custom_alert.created') return { kind: 'custom_alert', id };
  if (type === 'merchandise_sale.created') return { kind: 'sale', id };
  if (type === 'alert.shown' && data.type === 'custom') return { kind: 'custom_alert', id };
  if (type === 'alert.shown' && data.type === 'merchandise-sale') return { kind: 'sale', id };
  return null;
}

/**
 * The webhook's `data` from the real-time payload: the resource the REST API returns for the same
 * item. The channel's `reason` goes (the event type says it), and so does the widget's `name` on
 * custom alerts (the REST custom alert has none; a sale's `name` is part of its REST resource).
 */
export function webhookData(type: string, payload: Record<string, unknown>): Record<string, unknown> {
  const { reason: _reason, ...data } = payload;
  if (type === 'custom_alert.created') delete data.name;
  return data;
}
