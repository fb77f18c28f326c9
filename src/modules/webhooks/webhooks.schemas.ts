import { Type } from 'typebox';
import { stringEnum } from '../../api/schemas.js';
import { WEBHOOK_EVENTS } from './webhook-events.js';

/** Marks an operation as ours, not the original service's (OpenAPI `x-` extension on the operation). */
export const EXTENSION = { 'x-openalerts-extension': true } as const;

export const WebhookEventName = stringEnum(WEBHOOK_EVENTS, { description: 'An event type.' });

/** POST /webhooks body; validated by the service (messages in the INTEROP §1 shape). */
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
