import type { FastifyInstance } from 'fastify';
import { signedRoute } from '../merchants/signed-route.js';
import { toSaleInput } from './sales.input.js';
import { SaleBody, SaleReply } from './sales.schemas.js';
import { recordSale } from './sales.service.js';

export async function salesRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: SaleBody }>(
    '/merchandise_sale',
    signedRoute(app, {
      summary: 'Report a merchandise sale (4.8)',
      description:
        'Credits the streamer and shows a sale alert in their widget; 201 `{data: sale alert}`. Idempotent per merchant and `external_id`: an identical retry answers 200 with the original sale and credits nothing; different content is a 400 on `external_id`.',
      body: SaleBody,
      response: { 200: { ...SaleReply, description: 'An identical retry: the original sale.' }, 201: { ...SaleReply, description: 'Recorded.' } },
    }),
    async (request, reply) => {
      const input = toSaleInput(request.body);
      const { resource, created } = await recordSale(app.ctx.db, request.merchantClientId!, input);
      return reply.status(created ? 201 : 200).send({ data: resource });
    },
  );
}
