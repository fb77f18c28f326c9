/**
 * Test-file cost, before and after a change: runs each given test file alone, as that checkout's
 * `npm test` runs it (`node scripts/test.js <file>`: compiled test/ and src/ under `node --test`;
 * a checkout older than scripts/test.js: `node --import tsx --test <file>`), under a baseline
 * checkout and under this one, alternating per round, and reports wall time and CPU time (user +
 * system of the file's process and every process it waited for: servers, CLI commands, Chromium)
 * with the load average. Through scripts/test.js a run also counts that script's own work (hashing
 * test/ and src/, about 0.1 s; compiling them when they changed, the first run only).
 * CPU is the figure to compare on a shared machine: wall time follows the load. `times` misses most
 * of Chromium (its renderers and zygotes are not reaped by the process the test waits for), so where
 * this runs as root with a cgroup CPU controller (v1 cpuacct or v2) each run also goes in a cgroup of
 * its own, and "all" is the CPU of every process the file started, Chromium whole included
 * (PostgreSQL's and Redis's servers are outside it).
 *
 *   node --import tsx bench/test-files.ts --before /tmp/oa-before [--rounds 2] test/ops/backup.test.ts …
 *
 * The baseline is another checkout with its own node_modules (e.g. `git worktree add /tmp/oa-before
 * <commit>` plus a symlink to this checkout's node_modules, whose better-sqlite3 fits this Node).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const before = option('--before');
const rounds = Number(option('--rounds') ?? '2');
if (!before || args.length === 0 || !fs.existsSync(path.join(before, 'test'))) {
  console.error('usage: node --import tsx bench/test-files.ts --before <baseline checkout> [--rounds N] <test file>…');
  process.exit(2);
}

interface Run {
  wall: number;
  cpu: number;
  /** CPU of the run's cgroup (every process it started), NaN without one. */
  all: number;
  load: number;
  ok: boolean;
}

/** A cgroup to count a run's whole CPU in: its folder and how to read the CPU used, in seconds. */
interface CpuGroup {
  dir: string;
  seconds(): number;
}

let groups = 0;
function cpuGroup(): CpuGroup | null {
  const name = `test-files-${process.pid}-${groups++}`;
  const v1 = '/sys/fs/cgroup/cpuacct';
  const v2 = '/sys/fs/cgroup';
  try {
    if (fs.existsSync(path.join(v1, 'cpuacct.usage'))) {
      const dir = path.join(v1, name);
      fs.mkdirSync(dir);
      return { dir, seconds: () => Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9 };
    }
    if (fs.existsSync(path.join(v2, 'cgroup.controllers'))) {
      const dir = path.join(v2, name);
      fs.mkdirSync(dir);
      return { dir, seconds: () => Number(/usage_usec (\d+)/.exec(fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8'))![1]) / 1e6 };
    }
  } catch {
    // Not root, or no controller: `times` only.
  }
  return null;
}

/** Ends what the run left in its cgroup (a Chromium helper outliving its browser) and removes the group. */
async function removeGroup(group: CpuGroup): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const pids = fs.readFileSync(path.join(group.dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  fs.rmdirSync(group.dir);
}

/**
 * One file in one checkout; CPU is bash's `times` for its children: every process waited for under
 * it; "all" is its cgroup's, when there is one.
 */
async function runFile(root: string, file: string): Promise<Run> {
  const load = os.loadavg()[0]!;
  const group = cpuGroup();
  const start = performance.now();
  const run = await new Promise<Omit<Run, 'all'>>((resolve, reject) => {
    const command = fs.existsSync(path.join(root, 'scripts', 'test.js')) ? 'node scripts/test.js' : 'node --import tsx --test';
    const enter = group ? `echo $$ > ${group.dir}/cgroup.procs; ` : '';
    const script = `${enter}CI=true ${command} --test-reporter=dot "$1" >/dev/null 2>&1; rc=$?; times; exit $rc`;
    const child = spawn('bash', ['-c', script, 'bench', file], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = [...out.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      // `times` prints the shell's own user and system time, then its children's.
      resolve({ wall: (performance.now() - start) / 1000, cpu: (seconds[2] ?? NaN) + (seconds[3] ?? NaN), load, ok: code === 0 });
    });
  });
  if (!group) return { ...run, all: NaN };
  const all = group.seconds();
  await removeGroup(group);
  return { ...run, all };
}

const fmt = (n: number) => n.toFixed(1).padStart(6);
for (const file of args) {
  const results: Record<'before' | 'after', Run[]> = { before: [], after: [] };
  for (let r = 0; r < rounds; r++) {
    results.before.push(await runFile(before, file));
    results.after.push(await runFile(here, file));
  }
  const line = (side: 'before' | 'after') =>
    results[side].map((x) => `${fmt(x.cpu)} cpu${Number.isNaN(x.all) ? '' : ` ${fmt(x.all)} all`} ${fmt(x.wall)} wall (load ${x.load.toFixed(1)})${x.ok ? '' : ' FAILED'}`).join(' | ');
  const sum = (side: 'before' | 'after', k: 'cpu' | 'all' | 'wall') => results[side].reduce((a, x) => a + x[k], 0);
  const ratio = (k: 'cpu' | 'all' | 'wall') => (sum('after', k) / sum('before', k)).toFixed(2);
  console.log(`${file}\n  before ${line('before')}\n  after  ${line('after')}\n  ratio after/before: cpu ${ratio('cpu')}${Number.isNaN(sum('after', 'all')) ? '' : `, all ${ratio('all')}`}, wall ${ratio('wall')}`);
}
