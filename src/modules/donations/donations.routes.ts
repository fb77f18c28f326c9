import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiErrorResponses, needsScope } from '../../api/schemas.js';
import { UnauthenticatedError } from '../../domain/errors.js';
import { PageQuery, paginate, PER_PAGE } from '../../http/pagination.js';
import { requireToken } from '../../oauth/bearer.js';
import { pageOfDonations } from './donations.repository.js';
import { toDonationResource } from './donations.resource.js';
import { DonationPage } from './donations.schemas.js';

const SCOPE = 'oauth-donation-index';

/** Spec 4.2: GET /alerts/donations, 30 per page, newest first (INTEROP §2). */
export const donationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const path = `${app.ctx.config.publicUrl}/api/v1/alerts/donations`;
  app.get(
    '/alerts/donations',
    {
      schema: {
        summary: 'The authorized user’s donation alerts',
        description: 'Paginated, 30 per page, newest first. A page past the end is an empty page with the same `links` and `meta`.',
        tags: ['Donations'],
        security: needsScope(SCOPE),
        querystring: PageQuery,
        response: { 200: DonationPage, ...apiErrorResponses(SCOPE) },
      },
      onRequest: requireToken(SCOPE),
    },
    async (request) => {
      const userId = request.auth!.userId!;
      const page = request.query.page ?? 1;
      const db = app.ctx.db;
      const [user, { rows, total }] = await Promise.all([
        db.selectFrom('users').select(['name', 'is_active']).where('id', '=', userId).executeTakeFirst(),
        pageOfDonations(db, userId, page, PER_PAGE),
      ]);
      if (!user || !user.is_active) throw new UnauthenticatedError('invalid_token');
      return paginate(
        rows.map((row) => toDonationResource(row, user.name)),
        { page, perPage: PER_PAGE, total, path },
      );
    },
  );
};
