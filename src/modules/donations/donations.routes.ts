import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { readCacheSwitch, StampedCache } from '../../api/read-cache.js';
import { apiErrorResponses, needsScope } from '../../api/schemas.js';
import { PageQuery, paginate, PER_PAGE } from '../../http/pagination.js';
import { requireToken } from '../../oauth/bearer.js';
import { DonationPage } from './donations.schemas.js';
import { donationPageStampReader, donationResourcePage } from './donations.service.js';

const SCOPE = 'oauth-donation-index';

/** A body already serialized by this route's response schema (so no second serialization). */
function sendSerialized(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json').send(body);
}

/**
 * Spec 4.2: GET /alerts/donations, 30 per page, newest first (compatibility.md §2).
 *
 * Hot path: the token check is cached (token-cache.ts), the body is serialized by the TypeBox
 * response schema, and a page already served is answered from `StampedCache` while the streamer's
 * donation stamp (primary-key reads, concurrent requests batched into one statement) is unchanged — reading 30 rows dominates
 * the cost of this route (bench/README.md). A miss costs one more statement: the page, its total
 * and the stamp it is cached under, read together.
 */
export const donationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const path = `${app.ctx.config.publicUrl}/api/v1/alerts/donations`;
  const cache = new StampedCache();
  const currentStamp = donationPageStampReader(app.ctx.db, app.ctx.database.waitLimitMs);
  app.get(
    '/alerts/donations',
    {
      schema: {
        summary: 'The authorized user’s donation alerts',
        description: 'Paginated, 30 per page, newest first. A page past the end is an empty page with the same `links` and `meta`.',
        tags: ['Donations'],
        security: needsScope(SCOPE),
        querystring: PageQuery,
        response: { 200: { ...DonationPage, description: 'One page of donation alerts, newest first, 30 per page, with `links` and `meta`.' }, ...apiErrorResponses(SCOPE) },
      },
      onRequest: requireToken(SCOPE),
    },
    async (request, reply) => {
      const userId = request.auth!.userId!;
      const page = request.query.page ?? 1;
      const { db } = app.ctx;
      const key = `${userId}:${page}`;
      if (readCacheSwitch.enabled) {
        const hit = cache.get(key, await currentStamp(userId));
        if (hit !== undefined) return sendSerialized(reply, hit);
      }
      const { data, total, stamp } = await donationResourcePage(db, userId, page, PER_PAGE);
      const serialized = reply.serialize(paginate(data, { page, perPage: PER_PAGE, total, path })) as string;
      // Cached under the stamp read with the rows: a write committed after that read changes the
      // stamp, so this entry is never served once it is out of date.
      if (readCacheSwitch.enabled) cache.set(key, stamp, serialized);
      return sendSerialized(reply, serialized);
    },
  );
};
