import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Who holds an outbox claim: `<node>/<pid>/<incarnation>`. The node is stable across restarts (a
 * server's DATA_DIR keeps it), the pid and a per-process incarnation tell this run from earlier ones.
 * A starting relay can then tell its own dead claims — same node, a process that is gone — from the
 * live claims of other nodes, which only the claim timeout may take over.
 */
export class ClaimOwner {
  readonly id: string;

  constructor(
    readonly node: string,
    readonly pid = process.pid,
    readonly incarnation = randomUUID().slice(0, 8),
  ) {
    this.id = `${node}/${pid}/${incarnation}`;
  }

  /** A claim of this node by a process that no longer runs (or an earlier run with our pid). */
  ownsDeadClaim(claimedBy: string): boolean {
    const parts = claimedBy.split('/');
    if (parts.length !== 3 || parts[0] !== this.node || claimedBy === this.id) return false;
    const pid = Number(parts[1]);
    return pid === this.pid || !processRuns(pid);
  }
}

function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // runs, as another user
  }
}

/** This node's stable id, kept in `<dataDir>/node-id` (written on first use). */
export function loadNodeId(dataDir: string): string {
  const file = path.join(dataDir, 'node-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (/^[\w.-]{1,64}$/.test(id)) return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomUUID();
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${id}\n`, { flag: 'wx' });
  } catch (err) {
    // Another process of this node wrote it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw err;
  }
  return id;
}
