import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where webhooks may go, and the one HTTP request that takes them there (issue 11 "Safety"). The
 * address is checked after our own DNS resolution on every attempt, and the socket connects to
 * exactly the address that was checked (a pinned `lookup`), so a name that resolves somewhere else
 * later — DNS rebinding — cannot slip past; a kept-alive socket is reused only by an attempt whose
 * own check gave the same address (ReceiverAgents). Redirects are not followed.
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
  return remembered(addressVerdicts, policy, address, addressVerdict);
}

function addressVerdict(address: string, policy: EndpointPolicy): string | null {
  const family = familyOf(address);
  if (!family) return `${address} is not an IP address`;
  if (LOOPBACK.check(address, family)) return policy.allowLoopback ? null : `${address} is a loopback address`;
  if (FORBIDDEN.check(address, family)) return `${address} is a private, link-local or reserved address`;
  return null;
}

/** A URL that may be registered; `error` says what to fix. The URL is shared: read it, never change it. */
export function checkEndpointUrl(raw: string, policy: EndpointPolicy): { url: URL } | { error: string } {
  return remembered(urlVerdicts, policy, raw, urlVerdict);
}

/**
 * The verdicts on URLs and addresses, which depend on nothing but the text and the policy, kept:
 * every attempt of a delivery asks again (each parse and range check was a few percent of the
 * dispatcher's CPU per delivery, bench/README.md). DNS is not kept: a name is resolved, and each
 * address it gives checked, on every attempt.
 */
const urlVerdicts = new Map<string, { url: URL } | { error: string }>();
const addressVerdicts = new Map<string, string | null>();
const REMEMBERED = 1024;

function remembered<V>(verdicts: Map<string, V>, policy: EndpointPolicy, text: string, judge: (text: string, policy: EndpointPolicy) => V): V {
  const key = `${policy.allowLoopback ? 'L' : 'S'}${text}`;
  if (verdicts.has(key)) return verdicts.get(key)!;
  const verdict = judge(text, policy);
  if (verdicts.size >= REMEMBERED) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(key, verdict);
  return verdict;
}

function urlVerdict(raw: string, policy: EndpointPolicy): { url: URL } | { error: string } {
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

/**
 * Where one attempt connects: the URL's address, or what its name resolves to now, checked. Any
 * forbidden answer refuses the whole name (a name with one private address is suspect); plain http
 * (WEBHOOKS_ALLOW_HTTP) only ever reaches loopback addresses.
 */
async function checkedAddress(url: URL, resolver: Resolver, policy: EndpointPolicy): Promise<{ address: string; family: number } | { error: string }> {
  const host = bareHost(url);
  const ipFamily = isIP(host);
  // checkEndpointUrl has checked a literal address already (http: loopback only).
  if (ipFamily) return { address: host, family: ipFamily };
  let found: { address: string; family: number }[];
  try {
    found = await resolver(host);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { error: `${e.code ?? 'error'}: ${e.message}` };
  }
  if (found.length === 0) return { error: `ENOTFOUND: ${host} has no address` };
  const loopbackOnly = url.protocol === 'http:';
  for (const a of found) {
    const refused = refusedAddress(a.address, policy) ?? (loopbackOnly && !isLoopback(a.address) ? `${a.address}, not a loopback address (plain http is for loopback only)` : null);
    if (refused) return { error: `refused: ${host} resolves to ${refused}` };
  }
  return found[0]!;
}

/** A `lookup` that answers one address, whatever the name: the socket goes where the guard looked. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) return (callback as unknown as (err: null, all: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    callback(null, address, family);
  };
}

/**
 * Keep-alive connections to receivers, one agent per (origin, checked address). A socket is reused
 * only by a request whose own resolution, on this attempt, gave the same allowed address: the agent's
 * `lookup` is pinned to that address, so even a new socket of the agent cannot go anywhere else. When
 * a name moves, its new address gets its own agent; the old one idles out.
 */
export class ReceiverAgents {
  readonly #agents = new Map<string, http.Agent>();
  readonly #max: number;

  constructor(max = 256) {
    this.#max = max;
  }

  for(url: URL, address: string, family: number): http.Agent {
    const key = `${url.protocol}//${url.host}|${address}`;
    let agent = this.#agents.get(key);
    if (agent) {
      // Most recently used last: the map's first entry is the one to evict.
      this.#agents.delete(key);
      this.#agents.set(key, agent);
      return agent;
    }
    const options = {
      keepAlive: true,
      // An idle socket is closed after this; receivers (Node's default: 5 s) usually close first.
      timeout: 30_000,
      // One socket per queue at most (each queue sends one request at a time; the dispatcher bounds
      // the queues), so subscriptions sharing an endpoint never wait for each other's socket.
      maxFreeSockets: 16,
      lookup: pinnedLookup(address, family),
    };
    agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    this.#agents.set(key, agent);
    if (this.#agents.size > this.#max) {
      const [oldest, old] = this.#agents.entries().next().value as [string, http.Agent];
      this.#agents.delete(oldest);
      old.destroy();
    }
    return agent;
  }

  /** Closes every kept connection (the dispatcher stops). */
  destroy(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
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
  /** Keep-alive connections; without, a fresh connection for this request. */
  agents?: ReceiverAgents;
}

/** POSTs `body` to `url` once. Never throws: every outcome is a SendResult. */
export async function postJson(rawUrl: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null, excerpt: string | null): SendResult => ({
    statusCode, error, excerpt, latencyMs: Math.round(performance.now() - started),
  });
  const checked = checkEndpointUrl(rawUrl, opts.policy);
  if ('error' in checked) return done(null, checked.error, null);
  // Resolved and checked on every attempt, before any socket is chosen or made.
  const target = await checkedAddress(checked.url, opts.resolver, opts.policy);
  if ('error' in target) return done(null, target.error, null);
  const request: CheckedRequest = { url: checked.url.href, address: target.address, family: target.family, headers, body, timeoutMs: Math.max(0, opts.timeoutMs - (performance.now() - started)), wholeBody: opts.wholeBody ?? false };
  const result = await sendChecked(request, opts.agents);
  return done(result.statusCode, result.error, result.excerpt);
}

/** One request to an address the guard has checked: all the HTTP side needs, and nothing it could re-resolve. */
export interface CheckedRequest {
  url: string;
  address: string;
  family: number;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  wholeBody: boolean;
}

/**
 * Sends a checked request: the socket goes only to `address` (pinned lookup, or the agent of that
 * address). A kept-alive socket the receiver closed just as we wrote never delivered the request
 * (Node's documented case for retrying once), so that one case is sent again on a fresh connection.
 */
export async function sendChecked(request: CheckedRequest, agents?: ReceiverAgents): Promise<Omit<SendResult, 'latencyMs'>> {
  const url = new URL(request.url);
  const target = { address: request.address, family: request.family };
  const deadline = performance.now() + request.timeoutMs;
  const opts = { timeoutMs: request.timeoutMs, wholeBody: request.wholeBody, agents };
  const first = await send(url, target, request.headers, request.body, opts, deadline);
  const result = first.staleSocket ? await send(url, target, request.headers, request.body, { ...opts, agents: undefined }, deadline) : first;
  return { statusCode: result.statusCode, error: result.error, excerpt: result.excerpt };
}

type Attempt = Omit<SendResult, 'latencyMs'> & { staleSocket?: boolean };

function send(url: URL, target: { address: string; family: number }, headers: Record<string, string>, body: string, opts: { timeoutMs: number; wholeBody: boolean; agents?: ReceiverAgents }, deadline: number): Promise<Attempt> {
  const host = bareHost(url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    let responded = false;
    let complete = false;
    const finish = (result: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A complete answer leaves the socket to the agent for the next request; anything else
      // (a timeout, a body cut at 64 KB) closes it.
      if (!(result.statusCode !== null && complete)) request.destroy();
      resolve(result);
    };
    const request = client.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        // Pooled: the agent's sockets connect only to the checked address. Fresh: pinned to it too.
        agent: opts.agents ? opts.agents.for(url, target.address, target.family) : false,
        lookup: opts.agents ? undefined : pinnedLookup(target.address, target.family),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'OpenAlerts-Webhooks/1' },
      },
      (response) => {
        responded = true;
        const chunks: Buffer[] = [];
        let size = 0;
        const end = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          finish({ statusCode: response.statusCode ?? null, error: null, excerpt: opts.wholeBody ? text : text.slice(0, EXCERPT_BYTES) });
        };
        response.on('data', (chunk: Buffer) => {
          const room = MAX_RESPONSE_BYTES - size;
          chunks.push(chunk.subarray(0, room));
          size += Math.min(chunk.length, room);
          if (size >= MAX_RESPONSE_BYTES) end();
        });
        response.on('end', () => {
          complete = true;
          end();
        });
        response.on('error', end);
      },
    );
    const timer = setTimeout(() => finish({ statusCode: null, error: `timed out after ${Math.round(opts.timeoutMs)} ms`, excerpt: null }), Math.max(0, deadline - performance.now()));
    request.on('error', (err: NodeJS.ErrnoException) => {
      const stale = !responded && request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      finish({ statusCode: null, error: `${err.code ?? 'error'}: ${err.message}`, excerpt: null, staleSocket: stale });
    });
    request.end(body);
  });
}
