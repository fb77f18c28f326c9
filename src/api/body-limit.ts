import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';

class PayloadTooLarge extends Error {
  readonly statusCode = 413;
  constructor(limit: number) {
    super(`The request body is too large; the limit is ${limit} bytes.`);
  }
}

/**
 * Fastify enforces `bodyLimit` on the bodies it parses, but @fastify/multipart reads the raw
 * stream itself and only bounds each part. A declared Content-Length over the limit is refused
 * before a byte is read, for every content type; chunked multipart bodies stay bounded by the
 * per-part limits of body-parsers.ts.
 */
export function declaredBodyLimit(app: FastifyInstance): onRequestAsyncHookHandler {
  const limit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  return async function (request) {
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) throw new PayloadTooLarge(limit);
  };
}
