import type { Publication } from '../broker.js';
import { DisconnectBadRequest } from '../disconnect.js';
import {
  appendRaw, commandFromParams, decodeLines, encodeList, isObject, METHODS, uint,
  type Codec, type Command, type Method,
} from './codec.js';

/**
 * Modern JSON protocol (Centrifugo v4+, centrifuge-js ≥ 3): a command carries its method as a key
 * (`{id, connect:{…}}`, `{id, subscribe:{…}}`), replies answer under the same key, pushes are
 * `{push:{channel, pub|join|…}}`, the server pings with `{}` and the client answers `{}`.
 */

/** Subscribe `flag` bit asking for error 112 instead of `recovered:false` (centrifuge `client.go`). */
export const FLAG_REJECT_UNRECOVERED = 2;

function toCommand(raw: unknown): Command {
  if (!isObject(raw)) throw DisconnectBadRequest;
  const id = raw.id;
  let m: Method = 'unknown';
  let p: Record<string, unknown> = {};
  for (const k of METHODS) {
    if (raw[k] !== undefined && raw[k] !== null) {
      m = k;
      p = isObject(raw[k]) ? (raw[k] as Record<string, unknown>) : {};
      break;
    }
  }
  if (m === 'unknown' && (id === undefined || id === 0)) return { method: 'pong' };
  return commandFromParams(m, id, p, (p) => ({
    offset: uint(p.offset), joinLeave: p.join_leave === true, flag: uint(p.flag),
  }));
}

function encodePublication(pub: Publication): string {
  return pub.offset > 0 ? `{"data":${pub.data},"offset":${pub.offset}}` : `{"data":${pub.data}}`;
}

function reply(id: unknown, key: string, result: string): string {
  return `{"id":${JSON.stringify(id)},"${key}":${result}}`;
}

export const v2Codec: Codec = {
  name: 'v2',
  serverPing: '{}',

  decode(frame: string): Command[] {
    return decodeLines(frame, toCommand);
  },

  connectReply(id, r) {
    return reply(id, 'connect', JSON.stringify({ client: r.client, version: r.version, ping: r.pingSeconds, pong: true }));
  },

  subscribeReply(id, r) {
    if (!r.recoverable) return reply(id, 'subscribe', '{}');
    const result: Record<string, unknown> = { recoverable: true, positioned: true, epoch: r.epoch, offset: r.offset };
    if (r.wasRecovering) result.was_recovering = true;
    if (r.recovered) result.recovered = true;
    let encoded = JSON.stringify(result);
    if (r.publications.length > 0) encoded = appendRaw(encoded, 'publications', encodeList(r.publications, encodePublication));
    return reply(id, 'subscribe', encoded);
  },

  historyReply(id, r) {
    const pubs = encodeList(r.publications, encodePublication);
    return reply(id, 'history', appendRaw(JSON.stringify({ epoch: r.epoch, offset: r.offset }), 'publications', pubs));
  },

  emptyReply(id, m) {
    return reply(id, m, '{}');
  },

  refreshReply(id, r) {
    return reply(id, 'refresh', JSON.stringify({ client: r.client, version: r.version, expires: false }));
  },

  errorReply(id, err) {
    const error: Record<string, unknown> = { code: err.code, message: err.message };
    if (err.temporary) error.temporary = true;
    return JSON.stringify({ id, error });
  },

  joinPush(channel, info) {
    return JSON.stringify({ push: { channel, join: { info: { user: info.user, client: info.client } } } });
  },

  publicationPush(channel, pub) {
    return `{"push":{"channel":${JSON.stringify(channel)},"pub":${encodePublication(pub)}}}`;
  },
};
