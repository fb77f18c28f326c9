import { BrokerAuthority } from '../../src/cluster/broker-authority.js';
import { Counters } from '../../src/cluster/counters.js';
import { PrimaryLink } from '../../src/cluster/primary-link.js';
import { WorkerMessages } from '../../src/cluster/worker-messages.js';
import type { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { ipcLoop, type IpcLoop } from './ipc-loop.js';

export interface IpcPrimary {
  authority: BrokerAuthority;
  /** Each worker's link to the primary (worker ids 1…N, as node:cluster numbers them). */
  links: PrimaryLink[];
  /** Closes the links and the channels; the authority forgets the workers. The broker stays open. */
  close(): Promise<void>;
}

/**
 * The primary of `serve --workers N` without Redis, as far as its workers see it: its
 * BrokerAuthority over `broker` and its message handling (src/cluster/worker-messages.ts: broker
 * requests, shared counters, commits, revocations passed on), each worker on a real IPC channel of
 * its own (ipc-loop.ts). `committed` is what the primary does on a worker's commit notice.
 */
export async function ipcPrimary(count: number, broker: MemoryBroker, committed: () => void = () => {}): Promise<IpcPrimary> {
  const loops: IpcLoop[] = await Promise.all(Array.from({ length: count }, () => ipcLoop()));
  const gone = new Set<number>();
  const toWorker = (id: number, message: unknown) => {
    if (!gone.has(id)) loops[id - 1]?.toWorker(message);
  };
  const authority = new BrokerAuthority(broker, toWorker);
  const messages = new WorkerMessages({ send: toWorker, ids: () => loops.map((_, i) => i + 1).filter((id) => !gone.has(id)) }, authority, new Counters(), committed);
  loops.forEach((loop, i) => loop.onFromWorker((m) => messages.handle(i + 1, m)));
  const links = loops.map((loop) => new PrimaryLink(loop.worker));
  return {
    authority,
    links,
    async close() {
      for (const l of links) l.close();
      await Promise.all(
        loops.map(async (loop, i) => {
          gone.add(i + 1);
          await loop.close();
          await authority.workerGone(i + 1);
        }),
      );
    },
  };
}
