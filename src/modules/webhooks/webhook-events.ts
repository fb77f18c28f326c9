import type { EventType } from '../outbox/events.js';

/**
 * The events an application can subscribe to, and what it needs for each. Donations, goals and polls
 * need `oauth-donation-subscribe` (issue 11: one scope for a streamer's events, the one integrations
 * already ask for); goals and polls also accept the scope of their own real-time channel (spec 5.2,
 * §6: `oauth-goal-subscribe`, `oauth-poll-subscribe`), so a token made for those channels works too.
 * Custom alerts and merchandise sales are delivered only for the application's own items: the custom
 * alerts it sent, the sales of its merchants.
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

/**
 * What subscribing to an event takes: any one of `scopes` on the token (the first is the one a 403
 * names), or Merchandise API access of the app.
 */
export type EventRequirement = { scopes: readonly [string, ...string[]] } | { merchandiseAccess: true };

const DONATIONS = { scopes: ['oauth-donation-subscribe'] } as const;
const GOALS = { scopes: ['oauth-donation-subscribe', 'oauth-goal-subscribe'] } as const;
const POLLS = { scopes: ['oauth-donation-subscribe', 'oauth-poll-subscribe'] } as const;

export const REQUIREMENTS: Record<WebhookEvent, EventRequirement> = {
  'donation.created': DONATIONS,
  'custom_alert.created': { scopes: ['oauth-custom_alert-store'] },
  'merchandise_sale.created': { merchandiseAccess: true },
  'goal.created': GOALS,
  'goal.updated': GOALS,
  'goal.finished': GOALS,
  'poll.created': POLLS,
  'poll.updated': POLLS,
  'poll.finished': POLLS,
  // Which alert was shown and when: donations to any app with the donation scope; a custom alert or a
  // sale only to the application that owns it (see `ownedItem`).
  'alert.shown': DONATIONS,
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
