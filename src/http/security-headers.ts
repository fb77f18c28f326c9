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
export const DOCS_CSP_DIRECTIVES = {
  ...CSP_DIRECTIVES,
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'https:'],
  mediaSrc: ["'self'"],
  connectSrc: ["'self'"],
};

/**
 * The base policy, on every response (@fastify/helmet at the root, before any route). A plugin
 * whose routes need another policy sets it for its own routes with `useContentSecurityPolicy`.
 */
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
}

/**
 * Replaces the Content-Security-Policy for every route the calling plugin adds afterwards (helmet's
 * per-route configuration), including routes added by plugins it registers.
 */
export function useContentSecurityPolicy(app: FastifyInstance, directives: Record<string, string[]>): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, helmet: { contentSecurityPolicy: { useDefaults: false, directives } } } as typeof route.config;
  });
}
