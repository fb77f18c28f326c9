import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

declare module 'fastify' {
  interface RouteShorthandOptions {
    /** Helmet options replacing the base policy's for this route (merged over it, key by key). */
    helmet?: HelmetOptions;
  }
  interface FastifyContextConfig {
    helmet?: HelmetOptions;
  }
}

/**
 * Security headers on every response (helmet's, worked out once per policy), registered before any route.
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

/** What a policy does to a response: headers to set (in helmet's order), or to remove (null). */
type HeaderWrites = ReadonlyArray<readonly [name: string, value: string | null]>;

/**
 * Runs helmet once against a recording response. Our policies are constants (no per-request
 * nonces or directive functions), so every response gets exactly these writes; doing them from a
 * list instead of calling helmet per request (as @fastify/helmet did, parsing the CSP directives
 * each time) took about a third off a bare request's server CPU (bench/README.md, merchandise sales).
 */
function headerWrites(options: HelmetOptions): HeaderWrites {
  const writes: Array<[string, string | null]> = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => writes.push([name, String(value)]),
    removeHeader: (name: string) => writes.push([name, null]),
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err) => (failure = err));
  if (failure) throw failure;
  return writes;
}

/**
 * The base policy, on every response (a root onRequest hook, before any route). A route may
 * replace parts of it with its `helmet` option; a plugin whose routes need another policy sets it
 * for its own routes with `useContentSecurityPolicy`.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  const https = app.ctx.config.publicUrl.startsWith('https:');
  const base: HelmetOptions = {
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 15552000, includeSubDomains: false } : false,
  };
  const baseWrites = headerWrites(base);
  // Per route policy object (several routes share one): worked out on the first request.
  const routeWrites = new WeakMap<HelmetOptions, HeaderWrites>();
  app.addHook('onRoute', (route) => {
    if (route.helmet) route.config = { ...route.config, helmet: route.helmet } as typeof route.config;
  });
  app.addHook('onRequest', (request, reply, done) => {
    const own = request.routeOptions.config.helmet;
    let writes = baseWrites;
    if (own) {
      let known = routeWrites.get(own);
      if (!known) routeWrites.set(own, (known = headerWrites({ ...base, ...own } as HelmetOptions)));
      writes = known;
    }
    const res = reply.raw;
    for (const [name, value] of writes) {
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    done();
  });
}

/**
 * Replaces the Content-Security-Policy for every route the calling plugin adds afterwards,
 * including routes added by plugins it registers.
 */
export function useContentSecurityPolicy(app: FastifyInstance, directives: Record<string, string[]>): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, helmet: { contentSecurityPolicy: { useDefaults: false, directives } } } as typeof route.config;
  });
}
