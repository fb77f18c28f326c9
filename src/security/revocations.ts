/**
 * Something revoked. Every holder of state derived from it must forget it: the OAuth verify cache,
 * the real-time token checks, the sockets connected with those tokens — on every node.
 * - `grant`: an OAuth grant and every token issued under it (RFC 7009, reuse detection, the
 *   dashboard's "Authorized applications");
 * - `client`: an application, with all its grants (the application was deleted);
 * - `user`: an account was deactivated;
 * - `token`: one access token (RFC 7009 for an access token);
 * - `widget`: the streamer's widget token was regenerated; `key` names the new one (see
 *   realtime-tokens `widgetKey`), so widgets already using it are left alone.
 */
export type Revocation =
  | { kind: 'grant'; grantId: number }
  | { kind: 'client'; clientId: number }
  | { kind: 'user'; userId: number }
  | { kind: 'token'; hash: string }
  | { kind: 'widget'; userId: number; key: string };

export type RevocationListener = (revocation: Revocation) => void;

const id = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;

/** For what arrives from outside the process (the Redis bus): only well-formed revocations are acted on. */
export function isRevocation(value: unknown): value is Revocation {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  switch (r.kind) {
    case 'grant':
      return id(r.grantId);
    case 'client':
      return id(r.clientId);
    case 'user':
      return id(r.userId);
    case 'token':
      return typeof r.hash === 'string';
    case 'widget':
      return id(r.userId) && typeof r.key === 'string';
    default:
      return false;
  }
}

/**
 * The one place revocations go through. A service that revokes something calls `announce` after
 * its transaction commits; every listener of this node hears it at once (synchronously, before
 * `announce` returns), and the revocation bus carries it to the other nodes, where it arrives
 * through `receive`.
 */
export class Revocations {
  readonly #listeners = new Set<RevocationListener>();
  readonly #outgoing = new Set<RevocationListener>();

  constructor(private readonly logger?: { error(obj: object, msg?: string): void }) {}

  /** Revoked on this node: tell this node's listeners, then the other nodes. */
  announce(revocation: Revocation): void {
    this.receive(revocation);
    for (const send of this.#outgoing) send(revocation);
  }

  /** Revoked on another node (from the bus): this node's listeners only. */
  receive(revocation: Revocation): void {
    for (const listener of this.#listeners) {
      try {
        listener(revocation);
      } catch (err) {
        // A bug in one listener must not keep the revocation from the others.
        this.logger?.error({ err, revocation }, 'revocation listener failed');
      }
    }
  }

  /** Hears every revocation, whichever node it happened on. Returns the unsubscribe function. */
  on(listener: RevocationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears revocations made on this node only: what the bus sends to the others. */
  onAnnounce(send: RevocationListener): () => void {
    this.#outgoing.add(send);
    return () => this.#outgoing.delete(send);
  }
}
