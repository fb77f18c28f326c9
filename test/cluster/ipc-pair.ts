import { EventEmitter } from 'node:events';
import { BrokerAuthority } from '../../src/cluster/broker-authority.js';
import { isMessage, type ToPrimary, type ToWorker } from '../../src/cluster/messages.js';
import { PrimaryLink } from '../../src/cluster/primary-link.js';
import { IpcBroker } from '../../src/realtime/broker-ipc.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';

/**
 * A primary's broker authority and workers' IpcBrokers in one process, joined by channels that
 * behave as node's IPC does for them: messages are serialized (JSON) and delivered asynchronously,
 * in order. The real IPC is exercised by test/e2e/workers.test.ts.
 */
export function ipcCluster(): { authority: BrokerAuthority; worker(id: number): IpcBroker; disconnect(id: number): void; close(): void } {
  const workers = new Map<number, EventEmitter & { connected: boolean }>();
  const deliver = (to: EventEmitter, message: unknown) => {
    const copy = JSON.parse(JSON.stringify(message));
    setImmediate(() => to.emit('message', copy));
  };
  const memory = new MemoryBroker();
  const authority = new BrokerAuthority(memory, (id, message: ToWorker) => {
    const w = workers.get(id);
    if (w?.connected) deliver(w, message);
  });
  return {
    authority,
    worker(id) {
      const proc = Object.assign(new EventEmitter(), {
        connected: true,
        send(message: ToPrimary, _h: unknown, _o: unknown, cb?: (err: Error | null) => void) {
          const copy = JSON.parse(JSON.stringify(message)) as unknown;
          setImmediate(async () => {
            if (!isMessage<ToPrimary>(copy) || copy.oa !== 'req') return;
            try {
              const value = await authority.handle(id, copy.op, copy.args);
              if (proc.connected) deliver(proc, { oa: 'res', id: copy.id, ok: true, value: value ?? null });
            } catch (err) {
              if (proc.connected) deliver(proc, { oa: 'res', id: copy.id, ok: false, error: (err as Error).message });
            }
          });
          cb?.(null);
          return true;
        },
      });
      workers.set(id, proc);
      return new IpcBroker(new PrimaryLink(proc as unknown as NodeJS.Process));
    },
    disconnect(id) {
      const w = workers.get(id);
      if (!w) return;
      w.connected = false;
      w.emit('disconnect');
      void authority.workerGone(id);
    },
    close() {
      void memory.close();
    },
  };
}
