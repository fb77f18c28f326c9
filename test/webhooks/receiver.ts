import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';

/** One request as the receiver saw it. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** The client's end of the TCP connection: the same port again means a kept-alive connection. */
  remotePort: number;
}

/** What to answer a delivery: a status and body, a delay, or no answer at all. */
export type Behaviour = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/**
 * A real HTTP server on 127.0.0.1 that answers the registration challenge by echoing it and every
 * other request as `behave` says (default 200). It keeps everything it received, challenges apart.
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly challenges: Received[] = [];
  behave: (received: Received, n: number) => Behaviour = () => ({ status: 200 });
  /** How the challenge is answered; default: the challenge echoed as the body. */
  answerChallenge: (challenge: string) => { status: number; body: string } = (challenge) => ({ status: 200, body: challenge });
  #server: http.Server;
  #hanging = new Set<http.ServerResponse>();
  url = '';

  constructor() {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: any = null;
        try {
          json = JSON.parse(body);
        } catch {
          // kept as text
        }
        const received = { headers: req.headers, body, json, remotePort: req.socket.remotePort ?? 0 };
        if (json?.type === 'webhook.challenge') {
          this.challenges.push(received);
          const answer = this.answerChallenge(json.data.challenge);
          res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
          return;
        }
        this.received.push(received);
        const behaviour = this.behave(received, this.received.length);
        if (behaviour === 'hang') {
          this.#hanging.add(res);
          return;
        }
        const send = () => res.writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers }).end(behaviour.body ?? 'ok');
        if (behaviour.delayMs) setTimeout(send, behaviour.delayMs);
        else send();
      });
    });
  }

  static async start(path = '/hook'): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.#server.address() as AddressInfo).port}${path}`;
    return receiver;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Deliveries of events (not challenges) by `webhook-id`, in arrival order. */
  ids(): string[] {
    return this.received.map((r) => String(r.headers['webhook-id']));
  }

  async close(): Promise<void> {
    for (const res of this.#hanging) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * Receivers for one describe block: `start()` gives a new one, and all are closed after the block
 * (registered with node:test's `after`, so call it inside the describe).
 */
export function receivers(): () => Promise<Receiver> {
  const started: Receiver[] = [];
  after(async () => {
    await Promise.all(started.map((r) => r.close()));
  });
  return async () => {
    const r = await Receiver.start();
    started.push(r);
    return r;
  };
}
