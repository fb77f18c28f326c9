import { Type } from 'typebox';
import { stringEnum } from '../../api/schemas.js';
import { MAX_PAGE } from '../../http/pagination.js';
import { WEBHOOK_EVENTS } from './webhook-events.js';

/** Marks an operation as ours, not the original service's (OpenAPI `x-` extension on the operation). */
export const EXTENSION = { 'x-openalerts-extension': true } as const;

export const WebhookEventName = stringEnum(WEBHOOK_EVENTS, { description: 'An event type.' });

/** POST /webhooks body; validated by the service (messages in the compatibility.md §1 shape). */
export const CreateWebhookBody = Type.Object({
  url: Type.String({ description: 'The endpoint: an absolute `https://` URL on a public address, at most 2048 characters. It must pass the challenge (see the tag).' }),
  events: Type.Array(WebhookEventName, { minItems: 1, description: 'The events to deliver (form bodies: `events[]=…` or repeated `events=…`).' }),
});

export const WebhookResource = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  status: stringEnum(['active', 'disabled', 'removed'] as const, { description: '`disabled`: the retry window ran out; the streamer re-enables it on the dashboard.' }),
  status_reason: Type.Union([stringEnum(['retries_exhausted', 'gone', 'deleted_by_app', 'deleted_by_streamer'] as const), Type.Null()]),
  created_at: Type.String(),
  status_changed_at: Type.Union([Type.String(), Type.Null()]),
  secret: Type.Optional(Type.String({ description: 'The `whsec_…` signing secret: returned only when created or rotated. Store it; it is never shown again.' })),
});

export const WebhookIdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,15}$' }) });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;

export const DeliveryIdParams = Type.Object({
  id: Type.String({ pattern: '^[0-9]{1,15}$' }),
  delivery_id: Type.String({ pattern: '^[0-9]{1,15}$' }),
});

export const DeliveryQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number, from 1. A page past the end is an empty page, not an error.' })),
  status: Type.Optional(stringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this state.' })),
});

export const AttemptResource = Type.Object({
  attempted_at: Type.String(),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The answer’s status; null when none came (refused address, network error, timeout).' }),
  error: Type.Union([Type.String(), Type.Null()]),
  latency_ms: Type.Integer(),
  response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first kilobyte of the answer’s body.' }),
});

export const DeliveryResource = Type.Object({
  id: Type.Integer(),
  message_id: Type.String({ description: 'The `webhook-id` header: the same on every attempt and on a redelivery.' }),
  event_type: Type.String(),
  status: stringEnum(DELIVERY_STATUSES, { description: '`pending` until a 2xx (`delivered`); `failed` when the retry window ran out; `cancelled` when the subscription was removed.' }),
  created_at: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'While pending: when it is tried next (or as soon as the ones before it went out).' }),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Array(AttemptResource, { description: 'Every attempt, oldest first.' }),
});
