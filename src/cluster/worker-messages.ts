import { isRevocation } from '../security/revocations.js';
import type { BrokerAuthority } from './broker-authority.js';
import type { Counters } from './counters.js';
import { isMessage, type ToPrimary, type ToWorker } from './messages.js';

/** What the primary's message handling needs from the process tree it runs in. */
export interface WorkerSet {
  /** Sends to one worker; a worker gone meanwhile is skipped (its exit is handled elsewhere). */
  send(workerId: number, message: ToWorker): void;
  /** The workers alive now. */
  ids(): Iterable<number>;
}

/**
 * The primary's side of the conversation with its workers, whatever carries it: node:cluster in
 * `serve --workers N` (primary.ts), real IPC channels in the tests that run the real-time suites
 * against two nodes (test/realtime/workers-topology.ts). Requests are answered (broker operations
 * by the authority, shared counters here); a commit wakes the primary's relay and dispatcher; a
 * revocation goes on to every other worker.
 */
export class WorkerMessages {
  constructor(
    private readonly workers: WorkerSet,
    private readonly authority: BrokerAuthority | null,
    private readonly counters: Counters,
    private readonly committed: () => void,
  ) {}

  handle(from: number, message: unknown): void {
    if (!isMessage<ToPrimary>(message)) return;
    switch (message.oa) {
      case 'commit':
        this.committed();
        return;
      case 'revoked':
        if (!isRevocation(message.revocation)) return;
        for (const id of this.workers.ids()) if (id !== from) this.workers.send(id, { oa: 'revoked', revocation: message.revocation });
        return;
      case 'req':
        void this.#answer(from, message);
        return;
    }
  }

  async #answer(from: number, message: Extract<ToPrimary, { oa: 'req' }>): Promise<void> {
    const { id, op, args } = message;
    try {
      let value: unknown;
      if (op === 'counter.incr') {
        value = this.counters.incr(String(args[0]), Number(args[1]), Number(args[2]), args[3] === true, args[4] === true);
      } else if (op === 'counter.read') {
        value = this.counters.read(String(args[0]), Number(args[1]));
      } else if (this.authority) {
        value = await this.authority.handle(from, op, args);
      } else {
        throw new Error(`${op}: this cluster's workers use Redis`);
      }
      this.workers.send(from, { oa: 'res', id, ok: true, value: value ?? null });
    } catch (err) {
      this.workers.send(from, { oa: 'res', id, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  }
}
