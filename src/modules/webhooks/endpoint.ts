import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where webhooks may go, and the one HTTP request that takes them there (issue 11 "Safety"). The
 * address is checked after our own DNS resolution on every attempt, and the socket connects to
 * exactly the address that was checked (the request's `lookup` is the check), so a name that
 * resolves somewhere else later — DNS rebinding — cannot slip past. Redirects are not followed.
 */

export interface EndpointPolicy {
  /** WEBHOOKS_ALLOW_HTTP: loopback endpoints are allowed, over plain http too (local development, tests). */
  allowLoopback: boolean;
}

/** DNS resolution as the guard sees it; replaceable so tests can make a name point anywhere. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

// Never a public endpoint: private (RFC 1918, ULA), shared (CGNAT), link-local (cloud metadata
// 169.254.169.254 among them), documentation, benchmark, multicast and reserved ranges, and IPv6
// forms that embed an IPv4 address (NAT64, 6to4, Teredo), which could wrap any of those. BlockList
// checks an IPv4-mapped IPv6 address (::ffff:a.b.c.d) against the IPv4 ranges itself.
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function familyOf(address: string): 'ipv4' | 'ipv6' | null {
  const family = isIP(address);
  return family === 4 ? 'ipv4' : family === 6 ? 'ipv6' : null;
}

export function isLoopback(address: string): boolean {
  const family = familyOf(address);
  return family !== null && LOOPBACK.check(address, family);
}

/** Why a webhook may not connect to `address`, or null when it may. */
export function refusedAddress(address: string, policy: EndpointPolicy): string | null {
  const family = familyOf(address);
  if (!family) return `${address} is not an IP address`;
  if (LOOPBACK.check(address, family)) return policy.allowLoopback ? null : `${address} is a loopback address`;
  if (FORBIDDEN.check(address, family)) return `${address} is a private, link-local or reserved address`;
  return null;
}

/** A URL that may be registered; `error` says what to fix. */
export function checkEndpointUrl(raw: string, policy: EndpointPolicy): { url: URL } | { error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'The url must be an absolute https:// URL.' };
  }
  if (raw.length > 2048) return { error: 'The url must not be longer than 2048 characters.' };
  if (url.username || url.password) return { error: 'The url must not carry a user name or password.' };
  const host = bareHost(url);
  const loopbackName = host === 'localhost' || isLoopback(host);
  if (url.protocol === 'http:') {
    if (!(policy.allowLoopback && loopbackName)) return { error: 'The url must use https://.' };
  } else if (url.protocol !== 'https:') {
    return { error: 'The url must use https://.' };
  }
  if (isIP(host)) {
    const refused = refusedAddress(host, policy);
    if (refused) return { error: `The url must point to a public address: ${refused}.` };
  } else if (host === 'localhost' && !policy.allowLoopback) {
    return { error: 'The url must point to a public address: localhost is a loopback name.' };
  }
  return { url };
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Thrown when the guard refuses where a name resolved. */
class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

/**
 * A `lookup` for http.request that resolves with `resolver` and hands over only allowed addresses;
 * plain http (`loopbackOnly`) only ever reaches loopback addresses.
 */
function guardedLookup(resolver: Resolver, policy: EndpointPolicy, loopbackOnly: boolean): LookupFunction {
  const check = (address: string) => refusedAddress(address, policy) ?? (loopbackOnly && !isLoopback(address) ? `${address}, not a loopback address (plain http is for loopback only)` : null);
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (found) => {
        // Any forbidden answer refuses the whole name: a name with one private address is suspect.
        const refused = found.map((a) => check(a.address)).find((r) => r !== null);
        if (found.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        if (refused) return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${refused}`), '', 0);
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (options.all) return (callback as unknown as (err: null, all: typeof found) => void)(null, wanted);
        const first = wanted[0] ?? found[0]!;
        callback(null, first.address, first.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** What a receiver answered (or why nothing came back). */
export interface SendResult {
  /** null: no HTTP response (refused address, connection error, timeout). */
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** The start of the response body, as text (at most EXCERPT_BYTES). */
  excerpt: string | null;
}

/** How much of a response body is read; the rest is never downloaded (a 10 MB answer harms nothing). */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** How much of it the delivery log keeps. */
const EXCERPT_BYTES = 1024;

export interface SendOptions {
  timeoutMs: number;
  policy: EndpointPolicy;
  resolver: Resolver;
  /** Keep the whole (bounded) body instead of an excerpt: the registration challenge reads it. */
  wholeBody?: boolean;
}

/** POSTs `body` to `url` once. Never throws: every outcome is a SendResult. */
export async function postJson(rawUrl: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null, excerpt: string | null): SendResult => ({
    statusCode, error, excerpt, latencyMs: Math.round(performance.now() - started),
  });
  const checked = checkEndpointUrl(rawUrl, opts.policy);
  if ('error' in checked) return done(null, checked.error, null);
  const url = checked.url;
  const host = bareHost(url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const request = client.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        // A fresh connection per attempt: a pooled socket would skip the address check.
        agent: false,
        lookup: isIP(host) ? undefined : guardedLookup(opts.resolver, opts.policy, url.protocol === 'http:'),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'OpenAlerts-Webhooks/1' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const complete = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          finish(done(response.statusCode ?? null, null, opts.wholeBody ? text : text.slice(0, EXCERPT_BYTES)));
        };
        response.on('data', (chunk: Buffer) => {
          const room = MAX_RESPONSE_BYTES - size;
          chunks.push(chunk.subarray(0, room));
          size += Math.min(chunk.length, room);
          if (size >= MAX_RESPONSE_BYTES) complete();
        });
        response.on('end', complete);
        response.on('error', complete);
      },
    );
    const timer = setTimeout(() => finish(done(null, `timed out after ${opts.timeoutMs} ms`, null)), opts.timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => finish(done(null, err instanceof RefusedAddressError ? err.message : `${err.code ?? 'error'}: ${err.message}`, null)));
    request.end(body);
  });
}
