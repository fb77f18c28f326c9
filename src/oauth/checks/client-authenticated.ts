import { loadClient, secretMatches } from '../clients.js';
import type { ClientAuthContext } from '../context.js';
import { InvalidClientError, InvalidRequestError } from '../errors.js';
import { parseClientId, stringParam } from '../params.js';
import type { Check } from './check.js';

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64; tolerate clients that skip that. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | null | 'malformed' {
  if (!header) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) return /^Basic\b/i.test(header) ? 'malformed' : null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * Client authentication by HTTP Basic or by body parameters (RFC 6749 §2.3.1), never both with
 * different values. Public clients send client_id alone. Secrets are compared in constant time.
 */
export const clientAuthenticated: Check<ClientAuthContext> = {
  name: 'client-authenticated',
  async run(ctx) {
    const basic = basicCredentials(ctx.authorization);
    if (basic === 'malformed') throw new InvalidClientError('The Authorization header must be Basic base64(client_id:client_secret)', true);
    ctx.usedBasic = basic !== null;
    const bodyId = stringParam(ctx.params, 'client_id');
    const bodySecret = stringParam(ctx.params, 'client_secret');

    let idText: string;
    let secret: string | undefined;
    if (basic) {
      if (bodyId !== undefined && bodyId !== basic.id) throw new InvalidRequestError('client_id', 'The client_id in the body differs from the one in the Authorization header');
      if (bodySecret !== undefined && bodySecret !== basic.secret) throw new InvalidRequestError('client_secret', 'Use one client authentication method: the Authorization header or the body, not both');
      idText = basic.id;
      secret = basic.secret || undefined;
    } else {
      if (bodyId === undefined) throw new InvalidRequestError('client_id');
      idText = bodyId;
      secret = bodySecret;
    }

    const id = parseClientId(idText);
    const client = id === null ? undefined : await loadClient(ctx.db, id);
    if (!client) throw new InvalidClientError('Unknown client_id', ctx.usedBasic);
    if (secret === undefined) {
      if (!client.isPublic) throw new InvalidClientError('This client must authenticate with its client_secret', ctx.usedBasic);
    } else if (secret.length > 512 || !secretMatches(ctx.encryptionKey, client, secret)) {
      throw new InvalidClientError('The client_secret is wrong', ctx.usedBasic);
    }
    ctx.client = client;
  },
};
