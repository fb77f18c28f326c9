import { donationChannel, goalChannel, pollChannel, widgetChannel } from './channels.js';

/**
 * The domain events the service records, and the real-time channels each one is published to. One
 * outbox row per event: a donation is stored once and reaches both the streamer's donation channel
 * and their alerts widget. Other readers of the outbox (webhooks) go by `type`.
 */
const ROUTES = {
  'donation.created': (userId: number) => [donationChannel(userId), widgetChannel(userId)],
  'custom_alert.created': (userId: number) => [widgetChannel(userId)],
  'merchandise_sale.created': (userId: number) => [widgetChannel(userId)],
  /** "Send test alert" on the dashboard: the widget only; nothing was stored. */
  'widget.test_alert': (userId: number) => [widgetChannel(userId)],
  /** "Skip current alert" on the dashboard (moderation): the open widget ends the alert it shows. */
  'widget.skip_alert': (userId: number) => [widgetChannel(userId)],
  /** The streamer changed their alert variations: open widgets switch to the list it carries at once. */
  'widget.settings_changed': (userId: number) => [widgetChannel(userId)],
  'goal.created': (userId: number) => [goalChannel(userId)],
  'goal.updated': (userId: number) => [goalChannel(userId)],
  'goal.finished': (userId: number) => [goalChannel(userId)],
  'poll.created': (userId: number) => [pollChannel(userId)],
  'poll.updated': (userId: number) => [pollChannel(userId)],
  'poll.finished': (userId: number) => [pollChannel(userId)],
  /** The alerts widget displayed an alert (POST /widget/api/shown): for webhooks only, no channel. */
  'alert.shown': (_userId: number) => [],
} satisfies Record<string, (userId: number) => string[]>;

export type EventType = keyof typeof ROUTES;

export function channelsOf(type: EventType, userId: number): string[] {
  return ROUTES[type](userId);
}

/** A domain event as the relay hands it to a publisher: its payload is already encoded JSON. */
export interface StoredEvent {
  /** The outbox id: identifies the publication, so publishing it again never makes a second one. */
  id: number;
  type: string;
  channels: string[];
  /** JSON text, published byte for byte. */
  payload: string;
  /** When the event was recorded (ms). */
  createdAt: number;
}

/** Where a publication landed in a channel's stream (offset 0: a channel without history). */
export interface ChannelPosition {
  offset: number;
  epoch: string;
}

/**
 * What the relay needs from the real-time side (implemented there, wired in the composition root):
 * deliver one stored event to every channel it lists. Publishing an event id again — after a crash
 * between publishing and marking it published — must not create a second publication.
 */
export interface EventPublisher {
  /** Resolves with one position per channel, in `event.channels` order. */
  publish(event: StoredEvent): Promise<ChannelPosition[]>;
  /**
   * Called once a round's events are all published: what reached this process's subscribers goes
   * out to their sockets now, not after the round's bookkeeping (the real-time node's `flushFanOut`).
   */
  flush?(): void;
  /**
   * Publishing completes in this process without waiting for I/O (the in-memory broker): on SQLite
   * the relay then publishes inside the one transaction that reads and marks a round's rows, instead
   * of claiming them in a write of their own first. Never set for a broker across the network: a
   * slow one would hold the database's only connection.
   */
  inProcess?: boolean;
}
