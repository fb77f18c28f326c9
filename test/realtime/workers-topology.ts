import http from 'node:http';
import type { StreamPosition } from '../../src/realtime/broker.js';
import { IpcBroker } from '../../src/realtime/broker-ipc.js';
import type { MemoryBroker } from '../../src/realtime/broker-memory.js';
import type { Disconnect } from '../../src/realtime/disconnect.js';
import { RealtimeNode, type RealtimeOptions } from '../../src/realtime/node.js';
import { ipcPrimary } from '../cluster/ipc-primary.js';

/** What the real-time suites use of "the node": one RealtimeNode, or the nodes of a workers topology together. */
export type TestNode = Pick<RealtimeNode, 'publish' | 'publishEncoded' | 'stats' | 'pendingPublications' | 'shutdown' | 'disconnectWhere'>;

/**
 * The nodes of `serve --workers N` (without Redis) as one: publications go out through each node
 * in turn, so a publisher and its subscribers sit on different nodes as often as not; counts are
 * the sums over the nodes.
 */
export class WorkerNodes implements TestNode {
  #next = 0;
  constructor(readonly all: RealtimeNode[]) {}

  #publisher(): RealtimeNode {
    return this.all[this.#next++ % this.all.length]!;
  }

  publish(channel: string, data: unknown): Promise<StreamPosition> {
    return this.#publisher().publish(channel, data);
  }

  publishEncoded(channel: string, json: string, key?: string): Promise<StreamPosition> {
    return this.#publisher().publishEncoded(channel, json, key);
  }

  stats(): { clients: number; subscriptions: number } {
    const sum = { clients: 0, subscriptions: 0 };
    for (const n of this.all) {
      const s = n.stats();
      sum.clients += s.clients;
      sum.subscriptions += s.subscriptions;
    }
    return sum;
  }

  get pendingPublications(): number {
    return this.all.reduce((sum, n) => sum + n.pendingPublications, 0);
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.all.map((n) => n.shutdown()));
  }

  disconnectWhere(match: Parameters<RealtimeNode['disconnectWhere']>[0], d?: Disconnect): number {
    return this.all.reduce((sum, n) => sum + n.disconnectWhere(match, d), 0);
  }
}

export interface WorkersTopology {
  node: WorkerNodes;
  /** Attach to the server that takes the connections: each WebSocket upgrade goes to the next node in turn. */
  attach(server: http.Server): void;
  close(): Promise<void>;
}

/**
 * What `serve --workers N` runs without Redis, in this process: the primary's side over
 * `primaryBroker` (test/cluster/ipc-primary.ts) and N RealtimeNodes each with an IpcBroker on its
 * PrimaryLink, the pieces a worker runs. Each node talks to the primary over a real node IPC
 * channel of its own, so requests, answers and publications are serialized and delivered as
 * between processes. Incoming WebSocket connections alternate between the nodes, as node:cluster's
 * round robin spreads them.
 */
export async function workersTopology(count: number, primaryBroker: MemoryBroker, opts: Omit<RealtimeOptions, 'broker'>): Promise<WorkersTopology> {
  const primary = await ipcPrimary(count, primaryBroker);
  const brokers = primary.links.map((link) => new IpcBroker(link));
  const nodes = new WorkerNodes(brokers.map((broker) => new RealtimeNode({ ...opts, broker })));
  const entries = nodes.all.map((node) => {
    const entry = http.createServer();
    node.attach(entry);
    return entry;
  });
  let turn = 0;
  return {
    node: nodes,
    attach(server) {
      server.on('upgrade', (req, socket, head) => {
        entries[turn++ % entries.length]!.emit('upgrade', req, socket, head);
      });
    },
    async close() {
      await nodes.shutdown();
      for (const b of brokers) await b.close();
      await primary.close();
    },
  };
}
