import WebSocket from 'ws';

/** Polls `check` until true or throws after `ms` with `what` in the message. */
export async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A raw legacy-protocol WebSocket client that records every frame it receives, parsed. */
export class RawClient {
  readonly frames: any[] = [];
  readonly ws: WebSocket;
  closeCode: number | null = null;

  private constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data) => {
      for (const line of data.toString().split('\n')) if (line.trim()) this.frames.push(JSON.parse(line));
    });
    this.ws.on('close', (code) => (this.closeCode = code));
  }

  static async open(url: string): Promise<RawClient> {
    const client = new RawClient(url);
    await new Promise<void>((resolve, reject) => {
      client.ws.once('open', () => resolve());
      client.ws.once('error', reject);
    });
    return client;
  }

  send(command: unknown): void {
    this.ws.send(JSON.stringify(command));
  }

  async reply(id: number, ms = 3000): Promise<any> {
    await waitFor(() => this.frames.some((f) => f.id === id), ms, `reply ${id}`);
    return this.frames.find((f) => f.id === id);
  }

  pushes(channel: string): any[] {
    return this.frames.filter((f) => f.id === undefined && f.result?.channel === channel);
  }

  close(): void {
    this.ws.close();
  }
}
