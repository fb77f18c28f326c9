import type { Publication } from '../broker.js';
import { DisconnectBadRequest } from '../disconnect.js';
import type { ClientError } from '../errors.js';
import {
  appendRaw, commandFromParams, decodeLines, encodeList, isObject, METHODS, uint,
  type Codec, type Command, type Method,
} from './codec.js';

/**
 * Legacy JSON protocol of Centrifugo v2 / centrifuge-js 2.8.x (compatibility.md §5 "Legacy protocol facts").
 * Commands `{id, method, params}`, keys matched case-insensitively (a C# client sends
 * `Id`/`Method`/`Params`), `method` a number or a name, several commands per frame split by `\n`.
 */

const BY_NAME = new Map<string, Method>(METHODS.map((m) => [m.replace('_', ''), m]));

/** Push types; PUBLICATION (0) is omitted on the wire. */
const PUSH_JOIN = 1;

const TWO_32 = 2 ** 32;

function method(v: unknown): Method {
  if (v === undefined || v === null) return 'connect'; // CONNECT is 0 and omitted by clients
  if (typeof v === 'number') return (Number.isInteger(v) && METHODS[v]) || 'unknown';
  if (typeof v === 'string') {
    if (/^\d+$/.test(v)) return METHODS[Number(v)] ?? 'unknown';
    return BY_NAME.get(v.toLowerCase().replace(/[_\s-]/g, '')) ?? 'unknown';
  }
  return 'unknown';
}

/** Copies an object with lower-cased keys (compatibility.md §5: keys match case-insensitively). */
function lowerKeys(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) out[k.toLowerCase()] = o[k];
  return out;
}

function toCommand(raw: unknown): Command {
  if (!isObject(raw)) throw DisconnectBadRequest;
  const c = lowerKeys(raw);
  const p = isObject(c.params) ? lowerKeys(c.params) : {};
  if (isObject(p.since)) p.since = lowerKeys(p.since);
  return commandFromParams(method(c.method), c.id, p, (p) => ({
    // centrifuge-js 2.x sends seq/gen when the server gave it seq, else offset;
    // position = gen·2³² + seq (compatibility.md §5 "Recovery").
    offset: p.seq !== undefined || p.gen !== undefined ? uint(p.gen) * TWO_32 + uint(p.seq) : uint(p.offset),
    joinLeave: true,
    flag: 0,
  }));
}

function position(offset: number): { offset: number; seq: number; gen?: number } {
  const gen = Math.floor(offset / TWO_32);
  return gen > 0 ? { offset, seq: offset - gen * TWO_32, gen } : { offset, seq: offset };
}

/** `{"data":<payload>,"offset":N,"seq":N}` — payload spliced in as encoded by the publisher. */
function encodePublication(pub: Publication): string {
  if (pub.offset <= 0) return `{"data":${pub.data}}`;
  const gen = Math.floor(pub.offset / TWO_32);
  const tail = gen > 0 ? `,"seq":${pub.offset - gen * TWO_32},"gen":${gen}` : `,"seq":${pub.offset}`;
  return `{"data":${pub.data},"offset":${pub.offset}${tail}}`;
}

function encodePublications(pubs: Publication[]): string {
  return encodeList(pubs, encodePublication);
}

function reply(id: unknown, result: string): string {
  return `{"id":${JSON.stringify(id)},"result":${result}}`;
}

export const legacyCodec: Codec = {
  name: 'legacy',
  serverPing: null, // WebSocket ping frames, as Centrifugo v2; clients also ping with method 7

  decode(frame: string): Command[] {
    return decodeLines(frame, toCommand);
  },

  connectReply(id, r) {
    return reply(id, JSON.stringify({ client: r.client, version: r.version }));
  },

  subscribeReply(id, r) {
    if (!r.recoverable) return reply(id, '{}');
    // compatibility.md §5: every reply on a recoverable channel carries recoverable, epoch, offset, seq.
    const result: Record<string, unknown> = { recoverable: true, epoch: r.epoch, ...position(r.offset) };
    if (r.recovered !== undefined) result.recovered = r.recovered;
    let encoded = JSON.stringify(result);
    if (r.publications.length > 0) encoded = appendRaw(encoded, 'publications', encodePublications(r.publications));
    return reply(id, encoded);
  },

  historyReply(id, r) {
    return reply(id, appendRaw(JSON.stringify({ epoch: r.epoch, offset: r.offset }), 'publications', encodePublications(r.publications)));
  },

  emptyReply(id, m) {
    // compatibility.md §5: ping `{method:7, id:N}` → `{id:N}`.
    return m === 'ping' ? `{"id":${JSON.stringify(id)}}` : reply(id, '{}');
  },

  refreshReply(id, r) {
    return reply(id, JSON.stringify({ client: r.client, version: r.version, expires: false }));
  },

  errorReply(id, err: ClientError) {
    return JSON.stringify({ id, error: { code: err.code, message: err.message } });
  },

  joinPush(channel, info) {
    return JSON.stringify({ result: { type: PUSH_JOIN, channel, data: { info: { user: info.user, client: info.client } } } });
  },

  publicationPush(channel, pub) {
    return `{"result":{"channel":${JSON.stringify(channel)},"data":${encodePublication(pub)}}}`;
  },
};
