import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';

/**
 * A real node IPC channel whose two ends are both in this process: a child process sends back
 * whatever it is sent, tagged with the end it is for. What crosses it is serialized, written to a
 * pipe and read back as between a cluster's primary and a worker, in order and with the latency
 * of the real thing; `worker` stands where a worker's `process` does (PrimaryLink takes it), and
 * the primary side sends with `toWorker` and hears with `onFromWorker`.
 */
export interface IpcLoop {
  /** The worker's end: what a worker's `process` is to PrimaryLink (message, disconnect, send, connected). */
  worker: NodeJS.Process;
  toWorker(message: unknown): void;
  onFromWorker(listener: (message: unknown) => void): void;
  /** Ends the channel: the worker's end hears `disconnect`, as when its primary is gone. */
  close(): Promise<void>;
}

// The child only echoes; it exits when the channel closes.
const ECHO = "process.on('message', (m) => process.connected && process.send(m, () => {})); process.on('disconnect', () => process.exit(0));";

export async function ipcLoop(): Promise<IpcLoop> {
  const child: ChildProcess = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  await once(child, 'spawn');
  const fromWorker = new Set<(message: unknown) => void>();
  const worker = Object.assign(new EventEmitter(), {
    get connected(): boolean {
      return child.connected;
    },
    send(message: unknown, _handle: unknown, _options: unknown, cb?: (err: Error | null) => void): boolean {
      if (!child.connected) {
        queueMicrotask(() => cb?.(new Error('the channel is closed')));
        return false;
      }
      return child.send({ to: 'primary', message }, (err) => cb?.(err));
    },
  });
  child.on('message', (m: { to: 'primary' | 'worker'; message: unknown }) => {
    if (m.to === 'worker') worker.emit('message', m.message);
    else for (const l of fromWorker) l(m.message);
  });
  child.once('disconnect', () => worker.emit('disconnect'));
  const exited = once(child, 'exit');
  return {
    worker: worker as unknown as NodeJS.Process,
    toWorker(message) {
      if (child.connected) child.send({ to: 'worker', message }, () => {}); // a closed channel: the worker is gone, as in the primary's send()
    },
    onFromWorker(listener) {
      fromWorker.add(listener);
    },
    async close() {
      if (child.connected) child.disconnect();
      if (child.exitCode === null && child.signalCode === null) await exited;
    },
  };
}
