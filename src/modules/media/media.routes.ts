import type { FastifyInstance } from 'fastify';
import * as repo from './media.repository.js';

/**
 * GET /media/<sha256>.<ext>: an uploaded alert file, from our origin, public like the widget that
 * shows it (the hash is unguessable without the content). The bytes behind a hash never change,
 * so responses are cached for a year (`immutable`) with the hash as ETag; the type is the one
 * recognised at upload, and `nosniff` (a header on every response) keeps browsers to it.
 */
export async function mediaRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { file: string } }>('/media/:file', async (request, reply) => {
    const match = /^([0-9a-f]{64})\.[a-z0-9]{2,5}$/.exec(request.params.file);
    if (!match) return reply.callNotFound();
    const sha256 = match[1]!;
    const etag = `"${sha256}"`;
    const cache = 'public, max-age=31536000, immutable';
    if (request.headers['if-none-match'] === etag) return reply.status(304).header('etag', etag).header('cache-control', cache).send();
    const file = await repo.findMediaBySha(app.ctx.db, sha256);
    if (!file) return reply.callNotFound();
    return reply.header('etag', etag).header('cache-control', cache).header('x-content-type-options', 'nosniff').type(file.content_type).send(file.data);
  });
}
