import type { WebSocket } from 'ws';
import type { Disconnect } from './disconnect.js';

/** What a client needs from its connection; `WsTransport` wraps a `ws` socket. */
export interface Transport {
  /** Queues one frame (text). Returns false when the socket is no longer open. */
  send(frame: string | Buffer): boolean;
  /** WebSocket-level ping frame (legacy protocol liveness, as Centrifugo v2). */
  ping(): void;
  close(d: Disconnect): void;
  /** Bytes queued in the socket not yet written to the kernel. */
  readonly bufferedAmount: number;
}

const OPEN = 1;
const TEXT = { binary: false } as const;

export class WsTransport implements Transport {
  constructor(private readonly ws: WebSocket) {}

  send(frame: string | Buffer): boolean {
    if (this.ws.readyState !== OPEN) return false;
    if (typeof frame === 'string') this.ws.send(frame);
    else this.ws.send(frame, TEXT);
    return true;
  }

  ping(): void {
    if (this.ws.readyState === OPEN) this.ws.ping();
  }

  close(d: Disconnect): void {
    if (this.ws.readyState === OPEN) this.ws.close(d.code, d.closeReason);
  }

  /** Resolves when the socket has closed; terminates it if that takes longer than `ms`. */
  closedWithin(ms: number): Promise<void> {
    if (this.ws.readyState === 3) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, ms);
      timer.unref();
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }
}
