import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import { proxyTrust } from './proxy-trust.js';

/**
 * Query and body fields that carry a credential. They never reach a log line: a log is read by
 * more people, and kept longer, than the secrets it would leak (OAuth codes and tokens, client
 * secrets sent where they do not belong, the widget token of an OBS URL, passwords).
 */
export const SECRET_FIELDS = [
  'token', 'access_token', 'refresh_token', 'code', 'code_verifier', 'client_secret', 'password', 'secret', '_csrf', 't',
] as const;
const SECRET_FIELD = new Set<string>(SECRET_FIELDS);
const REDACTED = '[REDACTED]';

/** The request target with every secret query value replaced; what the request log shows. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    // `token[x]=…` and `Token=…` are the same field to a lenient parser.
    const base = name.split('[')[0]!.toLowerCase();
    return SECRET_FIELD.has(base) ? `${rawName}=${REDACTED}` : pair;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** Headers and parsed fields wherever a log call might pass them (pino `redact` paths). */
const REDACT_PATHS = [
  ...['req', 'request', 'res', 'reply'].flatMap((root) => [
    `${root}.headers.authorization`, `${root}.headers.cookie`, `${root}.headers["set-cookie"]`, `${root}.headers["x-api-key"]`,
    ...SECRET_FIELDS.flatMap((field) => [`${root}.body.${field}`, `${root}.query.${field}`]),
  ]),
  'headers.authorization', 'headers.cookie', 'headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((field) => [`body.${field}`, `query.${field}`]),
];

/** A request id we accept from a trusted proxy: short, printable, no separators a log could split on. */
const WELL_FORMED_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}$/;

/**
 * One id per request, in every log line of that request (Fastify binds it to `request.log`) and in
 * the `X-Request-Id` answer. An incoming `X-Request-Id` is kept only from a peer TRUST_PROXY
 * trusts (so a proxy's id ties its logs to ours) and only when well formed; anyone else gets a
 * fresh one, so a client cannot inject text into our logs or pose as another request.
 */
export function requestIdGenerator(config: Pick<Config, 'trustProxy'>): (req: IncomingMessage) => string {
  const trusted = proxyTrust(config);
  return (req) => {
    const incoming = req.headers['x-request-id'];
    if (trusted && typeof incoming === 'string' && WELL_FORMED_ID.test(incoming) && req.socket.remoteAddress && trusted(req.socket.remoteAddress, 0)) {
      return incoming;
    }
    return randomUUID();
  };
}

/** Fastify options for request logs: level, redaction, request ids. */
export function loggingOptions(config: Readonly<Config>, enabled: boolean): Pick<FastifyServerOptions, 'logger' | 'genReqId' | 'requestIdHeader'> {
  return {
    logger: enabled
      ? {
          level: config.logLevel,
          redact: { paths: REDACT_PATHS, censor: REDACTED },
          serializers: {
            req: (request) => ({
              method: request.method,
              url: redactUrl(request.url),
              host: request.host,
              remoteAddress: request.ip,
              remotePort: request.socket?.remotePort,
            }),
          },
          ...(config.prettyLogs ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } } } : {}),
        }
      : false,
    requestIdHeader: false,
    genReqId: requestIdGenerator(config),
  };
}

/** Returns the request id to the client, so a user reporting a problem can quote it. */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
}
