import { once } from 'node:events';
import WebSocket from 'ws';
import { until } from './wait.js';

/**
 * A raw WebSocket that speaks frames by hand, for the wire-level tests of both protocols. A message
 * may carry several newline-separated replies or pushes (the server batches publications that go out
 * together); each is kept twice: in a queue that `next()`/`nextRaw()` consume in order, and parsed in
 * `frames`, which `reply()` and `pushes()` search without consuming.
 */
export class RawClient {
  readonly frames: any[] = [];
  closeCode: number | null = null;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #queue: string[] = [];
  #waiter: (() => void) | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      for (const line of data.toString().split('\n')) {
        if (!line.trim()) continue;
        this.#queue.push(line);
        this.frames.push(JSON.parse(line));
      }
      this.#waiter?.();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeCode = code;
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  static async open(url: string, opts?: WebSocket.ClientOptions): Promise<RawClient> {
    const ws = new WebSocket(url, opts);
    await once(ws, 'open');
    return new RawClient(ws);
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The next unread reply or push as text; fails after `ms` (a bound for a loaded machine, not an expectation). */
  async nextRaw(ms = 20_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (this.#queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a frame');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#waiter = null;
    }
    return this.#queue.shift()!;
  }

  async next(ms = 20_000): Promise<any> {
    return JSON.parse(await this.nextRaw(ms));
  }

  /** Asserts no unread message arrives within `ms`. */
  async nothing(ms = 150): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    if (this.#queue.length > 0) throw new Error(`unexpected frame: ${this.#queue[0]}`);
  }

  /** The reply to command `id`, whenever it arrived (read or not). */
  async reply(id: number, ms = 20_000): Promise<any> {
    return until(() => this.frames.find((f) => f.id === id), ms, `reply ${id}`);
  }

  /** Legacy-protocol publications received on `channel` so far. */
  pushes(channel: string): any[] {
    return this.frames.filter((f) => f.id === undefined && f.result?.channel === channel);
  }

  close(): void {
    this.ws.close();
  }
}

/** The JSON reason of a Centrifugo close frame. */
export function closeReason(c: { reason: string }): { reason: string; reconnect: boolean } {
  return JSON.parse(c.reason);
}
