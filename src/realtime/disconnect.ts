/**
 * Disconnects: thrown by a command handler (or raised by the node) to close the WebSocket with
 * `code` and the reason text `{"reason":…,"reconnect":…}` (compatibility.md §5 "Disconnect"). Both
 * protocols get the JSON reason: centrifuge-js 2.x requires it, centrifuge-js ≥ 3 parses it too.
 */
export class Disconnect extends Error {
  /** The close frame's reason text; at most 123 bytes (RFC 6455 §5.5). */
  readonly closeReason: string;

  constructor(
    readonly code: number,
    readonly reason: string,
    readonly reconnect: boolean,
  ) {
    super(reason);
    this.name = 'Disconnect';
    this.closeReason = JSON.stringify({ reason, reconnect });
  }
}

// compatibility.md §5: 3000 normal, 3001 shutdown (reconnect), 3500 invalid token, 3501 bad request,
// 3502 stale (no reconnect).
export const DisconnectNormal = new Disconnect(3000, 'connection closed', true);
export const DisconnectShutdown = new Disconnect(3001, 'shutdown', true);
export const DisconnectInvalidToken = new Disconnect(3500, 'invalid token', false);
/**
 * What a token was issued under was revoked (its OAuth grant or application, the account, the
 * widget token): closes the sockets holding it, and refuses it at connect. 3500 like any token
 * that no longer works — a terminal code, so clients do not reconnect with it.
 */
export const DisconnectRevoked = new Disconnect(3500, 'token revoked', false);
export const DisconnectBadRequest = new Disconnect(3501, 'bad request', false);
/** Not connected within `connectTimeoutMs` (compatibility.md §5: "not connected in 25 s is closed"). */
export const DisconnectStale = new Disconnect(3502, 'stale', false);
// Codes Centrifugo uses beyond those of compatibility.md §5; all of them ask the client to reconnect.
export const DisconnectServerError = new Disconnect(3004, 'internal server error', true);
/** The socket's send buffer exceeded `maxQueueBytes`: the client does not keep up. */
export const DisconnectSlow = new Disconnect(3008, 'slow', true);
/**
 * A subscriber's stream has a gap (a publication never reached this node): Centrifugo closes with
 * 3010 so the client reconnects and recovers the missed publications from history.
 */
export const DisconnectInsufficientState = new Disconnect(3010, 'insufficient state', true);
/** A server ping got no answer within `pongTimeoutMs`. */
export const DisconnectNoPong = new Disconnect(3012, 'no pong', true);
