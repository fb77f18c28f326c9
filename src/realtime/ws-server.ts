import { WebSocketServer } from 'ws';

/**
 * The real-time node's WebSocket server (the `ws` package), in a module of its own: the node
 * imports it on the first upgrade (node.ts), so a server start does not load `ws` (and the
 * `https`, `tls` and `zlib` modules it requires) before anyone connects.
 */
export function webSocketServer(maxPayload: number): WebSocketServer {
  return new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false, maxPayload });
}
