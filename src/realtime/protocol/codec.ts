import type { ClientError } from '../errors.js';
import type { Publication } from '../broker.js';
import { DisconnectBadRequest } from '../disconnect.js';

/**
 * Protocol-neutral commands. Each codec decodes its wire frames into these, and the client's
 * handler map dispatches on `method`. `id` is echoed back as received; a command without an id
 * gets no reply (compatibility.md §5; centrifuge `client.go` for SEND).
 */
export type Command =
  | { method: 'connect'; id: unknown; token?: string }
  | { method: 'subscribe'; id: unknown; channel?: string; token?: string; recover: boolean; offset: number; epoch: string; joinLeave: boolean; flag: number }
  | { method: 'unsubscribe'; id: unknown; channel?: string }
  | { method: 'history'; id: unknown; channel?: string; since?: { offset: number; epoch: string }; limit?: number; reverse: boolean }
  | { method: 'refresh'; id: unknown; token?: string }
  | { method: 'sub_refresh'; id: unknown; channel?: string; token?: string }
  | { [M in SimpleMethod]: { method: M; id: unknown } }[SimpleMethod]
  /** v2 only: an empty `{}` frame answering a server ping. */
  | { method: 'pong'; id?: undefined };

/** Commands whose parameters the server does not read. */
type SimpleMethod = 'ping' | 'publish' | 'presence' | 'presence_stats' | 'send' | 'rpc' | 'unknown';

export type Method = Command['method'];

export interface ClientInfo {
  user: string;
  client: string;
}

export interface ConnectResult {
  client: string;
  version: string;
  /** Seconds between server pings (v2 reply field `ping`; the client expects one at least this often). */
  pingSeconds: number;
}

export interface SubscribeResult {
  recoverable: boolean;
  /** Current stream top, or (v2, recovered) the position recovered from. */
  offset: number;
  epoch: string;
  /** Set when the command asked to recover. */
  recovered?: boolean;
  wasRecovering: boolean;
  publications: Publication[];
}

export interface HistoryReply {
  publications: Publication[];
  offset: number;
  epoch: string;
}

/** Encoders return complete frames (one reply or push per WebSocket frame, compatibility.md §5). */
export interface Codec {
  readonly name: 'legacy' | 'v2';
  /** Throws `DisconnectBadRequest` for a frame that isn't JSON commands. */
  decode(frame: string): Command[];
  connectReply(id: unknown, r: ConnectResult): string;
  subscribeReply(id: unknown, r: SubscribeResult): string;
  historyReply(id: unknown, r: HistoryReply): string;
  /** Reply with an empty result (unsubscribe, sub_refresh; legacy ping replies `{id}`). */
  emptyReply(id: unknown, method: Method): string;
  refreshReply(id: unknown, r: { client: string; version: string }): string;
  errorReply(id: unknown, err: ClientError): string;
  joinPush(channel: string, info: ClientInfo): string;
  publicationPush(channel: string, pub: Publication): string;
  /** An application-level server ping frame, or null when pings are WebSocket ping frames. */
  readonly serverPing: string | null;
}

/** `{…}` + `,"key":raw}`: splices already-encoded JSON (publication payloads) into an encoded object. */
export function appendRaw(encodedObject: string, key: string, raw: string): string {
  const sep = encodedObject.length > 2 ? ',' : '';
  return `${encodedObject.slice(0, -1)}${sep}"${key}":${raw}}`;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Non-negative integer from a JSON number or numeric string (some clients send uint64 as strings). */
export function uint(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

/**
 * Method names in the order of Centrifugo's `MethodType` numbers (legacy `method: N`); v2 carries the
 * same names as command keys.
 */
export const METHODS: readonly Method[] = [
  'connect', 'subscribe', 'unsubscribe', 'publish', 'presence', 'presence_stats',
  'history', 'ping', 'send', 'rpc', 'refresh', 'sub_refresh',
];

/**
 * Both protocols send one JSON command per line, several lines per frame (compatibility.md §5); blank lines
 * are skipped and a line that isn't JSON disconnects with "bad request".
 */
export function decodeLines(frame: string, toCommand: (raw: unknown) => Command): Command[] {
  const out: Command[] = [];
  for (const line of frame.split('\n')) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw DisconnectBadRequest;
    }
    out.push(toCommand(raw));
  }
  return out;
}

/** How a protocol carries a subscribe's start position and options. */
export type SubscribeOptions = { offset: number; joinLeave: boolean; flag: number };

/**
 * Parameters → command, the same in both protocols once each has found the method and the parameter
 * object (legacy with its keys already lower-cased, `since` included); only subscribe's position and
 * options are protocol-specific.
 */
export function commandFromParams(
  method: Method,
  id: unknown,
  p: Record<string, unknown>,
  subscribeOptions: (p: Record<string, unknown>) => SubscribeOptions,
): Command {
  switch (method) {
    case 'connect':
    case 'refresh':
      return { method, id, token: str(p.token) };
    case 'subscribe':
      return {
        method, id, channel: str(p.channel), token: str(p.token), recover: p.recover === true,
        epoch: str(p.epoch) ?? '', ...subscribeOptions(p),
      };
    case 'unsubscribe':
      return { method, id, channel: str(p.channel) };
    case 'sub_refresh':
      return { method, id, channel: str(p.channel), token: str(p.token) };
    case 'history': {
      const since = isObject(p.since) ? p.since : undefined;
      return {
        method, id, channel: str(p.channel),
        since: since ? { offset: uint(since.offset), epoch: str(since.epoch) ?? '' } : undefined,
        limit: p.limit === undefined ? undefined : uint(p.limit), reverse: p.reverse === true,
      };
    }
    default:
      return { method, id } as Command;
  }
}

/** A JSON array of publications, each spliced in by the protocol's own encoder. */
export function encodeList(pubs: Publication[], encodePublication: (pub: Publication) => string): string {
  return `[${pubs.map(encodePublication).join(',')}]`;
}
