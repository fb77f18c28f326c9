import { isMessage, type Operation, type ToPrimary, type ToWorker } from './messages.js';

/** The primary process went away (it died or is stopping): the worker cannot reach shared state. */
export class PrimaryGoneError extends Error {
  constructor() {
    super('the primary process of this cluster is gone; this worker is stopping');
    this.name = 'PrimaryGoneError';
  }
}

/**
 * A worker's side of the IPC channel to its primary: requests with answers (broker, shared
 * counters), and one-way notices both ways (commits, revocations, publications).
 */
export class PrimaryLink {
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  readonly #listeners = new Map<string, Set<(message: ToWorker) => void>>();
  #next = 1;
  readonly #onMessage = (message: unknown) => {
    if (!isMessage<ToWorker>(message)) return;
    if (message.oa === 'res') {
      const waiting = this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id);
      if (message.ok) waiting.resolve(message.value);
      else waiting.reject(new Error(message.error));
      return;
    }
    for (const listener of this.#listeners.get(message.oa) ?? []) listener(message);
  };
  readonly #onDisconnect = () => {
    for (const waiting of this.#pending.values()) waiting.reject(new PrimaryGoneError());
    this.#pending.clear();
  };

  constructor(private readonly proc: NodeJS.Process = process) {
    proc.on('message', this.#onMessage);
    proc.on('disconnect', this.#onDisconnect);
  }

  get connected(): boolean {
    return this.proc.connected === true;
  }

  request<T>(op: Operation, args: unknown[]): Promise<T> {
    if (!this.connected) return Promise.reject(new PrimaryGoneError());
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.send({ oa: 'req', id, op, args });
    });
  }

  /** One-way; dropped when the primary is gone (the worker is stopping then). */
  send(message: ToPrimary): void {
    if (!this.connected) return;
    this.proc.send!(message, undefined, undefined, (err) => {
      if (!err) return;
      if (message.oa !== 'req') return;
      const waiting = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      waiting?.reject(new PrimaryGoneError());
    });
  }

  on<K extends ToWorker['oa']>(kind: K, listener: (message: Extract<ToWorker, { oa: K }>) => void): () => void {
    let set = this.#listeners.get(kind);
    if (!set) this.#listeners.set(kind, (set = new Set()));
    const l = listener as (message: ToWorker) => void;
    set.add(l);
    return () => set.delete(l);
  }

  close(): void {
    this.proc.off('message', this.#onMessage);
    this.proc.off('disconnect', this.#onDisconnect);
    this.#onDisconnect();
  }
}
