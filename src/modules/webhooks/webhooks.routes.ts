import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { apiErrorResponses, bodyTooLarge, BODY_MEDIA_TYPES, documentationOnly, MessageBody } from '../../api/schemas.js';
import { requireToken } from '../../oauth/bearer.js';
import { Paginated, paginate, PER_PAGE } from '../../http/pagination.js';
import { CreateWebhookBody, DeliveryIdParams, DeliveryQuery, DeliveryResource, EXTENSION, WebhookIdParams, WebhookResource } from './webhooks.schemas.js';
import { createSubscription, deleteSubscription, deliveryQuery, getSubscription, listDeliveries, listSubscriptions, redeliverForCaller, rotateSubscriptionSecret, type Caller, type WebhookDeps } from './webhooks.service.js';

const TAGS = ['Webhooks'];
// Any valid token of the streamer; what each event needs is checked per event (403 names the scope).
const SECURITY = [{ oauth2: [] }];
const errors = { ...apiErrorResponses('<the event’s scope>'), 404: { ...MessageBody, description: 'No such subscription of this application and streamer.' } };

function caller(request: FastifyRequest): Caller {
  const auth = request.auth!;
  return { appId: auth.clientId, userId: auth.userId!, scopes: auth.scopes };
}

function deps(app: FastifyInstance): WebhookDeps {
  const ctx = app.ctx;
  return { db: ctx.db, config: ctx.config.webhooks, encryptionKey: ctx.secrets.encryptionKey, resolver: ctx.webhooks.resolver };
}

/**
 * /api/v1/webhooks — an OpenAlerts extension: HTTP callbacks for a streamer's events, signed per
 * Standard Webhooks (docs/webhooks.md). The token's application and streamer own the subscription.
 */
export async function webhookRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/webhooks',
    {
      schema: {
        ...EXTENSION,
        summary: 'Subscribe an HTTPS endpoint to the authorized streamer’s events',
        description:
          'OpenAlerts extension. Before answering, the endpoint gets a signed `webhook.challenge` message and must answer 200 with its `data.challenge` as the body. `donation.created`, `alert.shown`, `goal.*` and `poll.*` need `oauth-donation-subscribe`; `goal.*` also accept `oauth-goal-subscribe` and `poll.*` `oauth-poll-subscribe` (the scopes of their real-time channels); `custom_alert.created` (`oauth-custom_alert-store`) delivers the custom alerts this application sent, `merchandise_sale.created` (Merchandise API access) the sales of its merchants.',
        tags: TAGS,
        security: SECURITY,
        consumes: BODY_MEDIA_TYPES,
        body: CreateWebhookBody,
        response: { 201: Type.Object({ data: WebhookResource }, { description: 'The subscription, with its `secret` (shown only now).' }), ...errors, ...bodyTooLarge },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      const data = await createSubscription(deps(app), caller(request), { url: body.url, events: body.events });
      return reply.status(201).send({ data });
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        ...EXTENSION,
        summary: 'This application’s webhook subscriptions for the authorized streamer',
        description: 'OpenAlerts extension. Removed subscriptions are not listed.',
        tags: TAGS,
        security: SECURITY,
        response: { 200: Type.Object({ data: Type.Array(WebhookResource) }), ...errors },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request) => ({ data: await listSubscriptions(app.ctx.db, caller(request)) }),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: { ...EXTENSION, summary: 'One webhook subscription', description: 'OpenAlerts extension.', tags: TAGS, security: SECURITY, params: WebhookIdParams, response: { 200: Type.Object({ data: WebhookResource }), ...errors } },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request) => ({ data: await getSubscription(app.ctx.db, caller(request), (request.params as { id: string }).id) }),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        ...EXTENSION,
        summary: 'Unsubscribe',
        description: 'OpenAlerts extension. Nothing more is delivered; what was queued is cancelled. Answers the removed subscription.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        response: { 200: Type.Object({ data: WebhookResource }), ...errors },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request) => ({ data: await deleteSubscription(app.ctx.db, caller(request), (request.params as { id: string }).id) }),
  );

  app.post(
    '/webhooks/:id/secret',
    {
      schema: {
        ...EXTENSION,
        summary: 'Rotate the signing secret',
        description: 'OpenAlerts extension. Answers the new `secret` (shown only now). The old secret keeps signing too — a second `v1,` signature in `webhook-signature` — for the overlap period (`WEBHOOKS_SECRET_OVERLAP`, 24 hours by default).',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        response: { 200: Type.Object({ data: WebhookResource }), ...errors },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request) => ({ data: await rotateSubscriptionSecret(deps(app), caller(request), (request.params as { id: string }).id) }),
  );

  const deliveriesErrors = { ...apiErrorResponses('<the event’s scope>'), 404: { ...MessageBody, description: 'No such subscription (or delivery) of this application and streamer.' } };

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        ...EXTENSION,
        summary: 'The delivery log of a subscription',
        description:
          'OpenAlerts extension. Every message queued for the subscription with its attempts (status, latency, the start of the answer), newest first, 30 per page, optionally only those in one `status`. Links keep the filter.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: DeliveryQuery,
        response: { 200: { ...Paginated(DeliveryResource), description: 'One page of deliveries, newest first.' }, ...deliveriesErrors },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request) => {
      const { id } = request.params as { id: string };
      // Whose it is first: another application's subscription is a 404 whatever the query.
      await getSubscription(app.ctx.db, caller(request), id);
      const { page, status } = deliveryQuery(request.query);
      const { data, total } = await listDeliveries(app.ctx.db, caller(request), id, { page, perPage: PER_PAGE, status });
      const path = `${app.ctx.config.publicUrl}/api/v1/webhooks/${id}/deliveries`;
      const result = paginate(data, { page, perPage: PER_PAGE, total, path });
      if (!status) return result;
      // As Laravel's paginator with appends(): the links keep the filter.
      const keep = (url: string | null) => url && url.replace('?page=', `?status=${status}&page=`);
      return { ...result, links: { first: keep(result.links.first)!, last: keep(result.links.last)!, prev: keep(result.links.prev), next: keep(result.links.next) } };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        ...EXTENSION,
        summary: 'Send a logged message again',
        description:
          'OpenAlerts extension. Queues the message again at the end of the subscription’s queue, with the same body and `webhook-id` (de-duplicating receivers see a repeat). Answers the new delivery. A disabled subscription sends it once re-enabled.',
        tags: TAGS,
        security: SECURITY,
        params: DeliveryIdParams,
        response: { 202: Type.Object({ data: DeliveryResource }, { description: 'The new delivery, queued.' }), ...deliveriesErrors },
      },
      ...documentationOnly,
      onRequest: requireToken(),
    },
    async (request, reply) => {
      const { id, delivery_id: deliveryId } = request.params as { id: string; delivery_id: string };
      return reply.status(202).send({ data: await redeliverForCaller(app.ctx.db, caller(request), id, deliveryId) });
    },
  );
}
