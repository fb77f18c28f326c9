import type { FastifyInstance } from 'fastify';
import { MessageBody } from '../../api/schemas.js';
import type { Static } from 'typebox';
import { signedRoute } from '../merchants/signed-route.js';
import { salesRoutes } from '../sales/sales.routes.js';
import { toMerchandiseInput } from './merchandise.input.js';
import {
  CreateMerchandiseBody,
  MerchandiseIdentifierParams,
  MerchandiseIdParams,
  MerchandiseReply,
  PromocodeQuery,
  PromocodeReply,
  UpdateMerchandiseBody,
  UpsertMerchandiseBody,
} from './merchandise.schemas.js';
import { createMerchandise, updateMerchandise, upsertMerchandise } from './merchandise.service.js';
import { userIdByPromocode } from './promocodes.js';

/** Spec 4.4–4.8 (the Merchandise API), mounted under /api/v1. */
export async function merchandiseRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: Static<typeof CreateMerchandiseBody> }>(
    '/merchandise',
    signedRoute(app, {
      summary: 'Create merchandise (4.4)',
      description: 'Creates merchandise of one of your merchants; 201 `{data: merchandise}`.',
      body: CreateMerchandiseBody,
      response: { 201: { ...MerchandiseReply, description: 'Created.' } },
    }),
    async (request, reply) => {
      const input = toMerchandiseInput(request.body);
      return reply.status(201).send({ data: await createMerchandise(app.ctx.db, request.merchantClientId!, input) });
    },
  );

  app.put<{ Params: Static<typeof MerchandiseIdParams>; Body: Static<typeof UpdateMerchandiseBody> }>(
    '/merchandise/:id',
    signedRoute(app, {
      summary: 'Update merchandise by id (4.5)',
      description: 'Partial update: only `signature` is required; 200 `{data: merchandise}`.',
      params: MerchandiseIdParams,
      body: UpdateMerchandiseBody,
      response: { 200: { ...MerchandiseReply, description: 'Updated.' }, 404: { ...MessageBody, description: 'No merchandise with this id.' } },
    }),
    async (request, reply) => {
      const input = toMerchandiseInput(request.body);
      return reply.status(200).send({ data: await updateMerchandise(app.ctx.db, request.merchantClientId!, request.params.id, input) });
    },
  );

  // compatibility.md §3: the main TS client sends this call as POST; the path identifiers are not signed.
  const upsert = signedRoute(app, {
    summary: 'Create or update merchandise by identifiers (4.6)',
    description: 'Creates the merchandise (201) or updates it (200). PUT or POST; the identifiers in the path are not part of the signature.',
    params: MerchandiseIdentifierParams,
    body: UpsertMerchandiseBody,
    response: { 200: { ...MerchandiseReply, description: 'Updated.' }, 201: { ...MerchandiseReply, description: 'Created.' } },
  });
  for (const method of ['PUT', 'POST'] as const) {
    app.route<{ Params: Static<typeof MerchandiseIdentifierParams>; Body: Static<typeof UpsertMerchandiseBody> }>({
      ...upsert,
      method,
      url: '/merchandise/:merchant_identifier/:merchandise_identifier',
      handler: async (request, reply) => {
        const { merchant_identifier, merchandise_identifier } = request.params;
        const input = toMerchandiseInput(request.body);
        const { resource, created } = await upsertMerchandise(app.ctx.db, request.merchantClientId!, merchant_identifier, merchandise_identifier, input);
        return reply.status(created ? 201 : 200).send({ data: resource });
      },
    });
  }

  app.get<{ Querystring: Static<typeof PromocodeQuery> }>(
    '/merchandise/user',
    signedRoute(app, {
      summary: 'User id from a promocode (4.7)',
      description: 'Query `promocode` and `signature`; 200 `{data: {user_id}}`; an unknown promocode is a 400.',
      querystring: PromocodeQuery,
      response: { 200: { ...PromocodeReply, description: 'The streamer behind the promocode.' } },
    }),
    async (request) => ({ data: { user_id: await userIdByPromocode(app.ctx.db, request.query.promocode) } }),
  );

  await app.register(salesRoutes);
}
