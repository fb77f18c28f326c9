import type { Generated, Selectable } from 'kysely';

/**
 * `active`: deliveries go out. `disabled`: the retry window ran out (or the streamer paused it); the
 * queue waits until someone re-enables it. `removed`: deleted by the app or the streamer, or the
 * endpoint answered 410 Gone; kept for the delivery log, never delivered to again.
 */
export type SubscriptionStatus = 'active' | 'disabled' | 'removed';

/** Why a subscription left `active`; shown on the dashboard instead of an e-mail. */
export type StatusReason = 'retries_exhausted' | 'gone' | 'deleted_by_app' | 'deleted_by_streamer';

/** An application's endpoint for one streamer's events (issue 11). */
export interface WebhookSubscriptionsTable {
  id: Generated<number>;
  /** The subscribing OAuth client (apps.id). */
  app_id: number;
  /** The streamer who authorized it; the events are theirs. */
  user_id: number;
  url: string;
  /** JSON array of event types (webhook-events.ts). */
  events: string;
  /** `whsec_…` sealed with the service key: signing needs it back. */
  secret_sealed: string;
  /** During a rotation's overlap the old secret signs too (a second `v1,` signature), until then. */
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  status: SubscriptionStatus;
  status_reason: StatusReason | null;
  status_at: number | null;
  /** When the head of the queue may be tried again (backoff); null: as soon as anything is pending. */
  next_attempt_at: number | null;
  /** The node process delivering this queue now (ClaimOwner id) and until when its lease holds. */
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

/** `pending` until delivered (2xx), `failed` (retry window over), or `cancelled` (subscription gone). */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

/** One message to one subscription: delivered in id order within the subscription. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  subscription_id: number;
  /** `webhook-id`: the same for every attempt and for a manual redelivery, so receivers de-duplicate. */
  message_id: string;
  event_type: string;
  /** The signed JSON body, sent byte for byte on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: number;
  /** The retry window runs from here: creation, or the moment the subscription was re-enabled. */
  window_start: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  finished_at: number | null;
  /**
   * The attempt that delivered it, when it is kept here instead of in webhook_attempts (PostgreSQL
   * since migration 0025): its latency and response excerpt; its time is `finished_at`, its status
   * `last_status_code`. Null otherwise (attemptsOf reads both).
   */
  delivered_latency_ms: number | null;
  delivered_excerpt: string | null;
}

/** One HTTP attempt of a delivery (the delivery log). */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: number;
  /** The response status; null when no response came (refused address, network error, timeout). */
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  /** The start of the response body (at most 1 KB kept). */
  response_excerpt: string | null;
}

export interface WebhookTables {
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
