import type { FastifyInstance } from 'fastify';
import { CredentialsChangedError, verifySignedRequest } from '../merchants/merchant-auth.js';
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
      handlerChecksCredentials: true,
    }),
    async (request, reply) => {
      const input = toSaleInput(request.body);
      let recorded;
      try {
        recorded = await recordSale(app.ctx.db, request.merchantClientId!, input, request.merchantAuthVersion);
      } catch (err) {
        if (!(err instanceof CredentialsChangedError)) throw err;
        // Verified afresh, the request needs no second look at the version (merchantAuthVersion is null).
        await verifySignedRequest(request, reply);
        recorded = await recordSale(app.ctx.db, request.merchantClientId!, input, request.merchantAuthVersion);
      }
      return reply.status(recorded.created ? 201 : 200).send({ data: recorded.resource });
    },
  );
}
