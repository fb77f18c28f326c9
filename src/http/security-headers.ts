import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Security headers on every response (@fastify/helmet), registered before any route.
 *
 * Content-Security-Policy: no inline script anywhere (`script-src 'self'`, `script-src-attr
 * 'none'`): pages load our own files from /static and embed data as `<script type="application/json">`.
 * Images and sounds may come from anywhere over http(s) (avatars, alert images and sounds a
 * streamer or an application chose); the widget's WebSocket may reach ws:/wss: (the real-time
 * server can live on another host). No page may be framed: OBS loads widgets as a top-level
 * browser source, not in a frame.
 *
 * Left out on purpose:
 * - `form-action`: Chrome applies it to the redirect after a POST, and the OAuth consent form
 *   redirects to the client's registered redirect URI on another origin.
 * - `upgrade-insecure-requests`: a self-hosted install may be served over plain http on a LAN.
 * - HSTS unless PUBLIC_URL is https.
 * Cross-Origin-Resource-Policy is `cross-origin`: applications show our avatar URLs on their sites.
 */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'https:', 'http:', 'data:'],
  mediaSrc: ["'self'", 'https:', 'http:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'", 'ws:', 'wss:'],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
};

/**
 * Swagger UI (/docs, @fastify/swagger-ui) loads only its own script files, but its React view
 * writes style attributes and data: images; it gets inline styles and nothing else extra.
 */
const DOCS_CSP = "default-src 'self'; base-uri 'self'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; font-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'";

export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  const https = app.ctx.config.publicUrl.startsWith('https:');
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 15552000, includeSubDomains: false } : false,
  });
  app.addHook('onSend', async (request, reply) => {
    const path = request.url;
    if (path === '/docs' || path.startsWith('/docs/') || path.startsWith('/docs?')) reply.header('content-security-policy', DOCS_CSP);
  });
}
