/**
 * Test-file cost, before and after a change: runs each given test file alone, as that checkout's
 * `npm test` runs it (`node scripts/test.js <file>`: compiled test/ and src/ under `node --test`;
 * a checkout older than scripts/test.js: `node --import tsx --test <file>`), under a baseline
 * checkout and under this one, alternating per round, and reports wall time and CPU time (user +
 * system of the file's process and every process it waited for: servers, CLI commands, Chromium)
 * with the load average. Through scripts/test.js a run also counts that script's own work (hashing
 * test/ and src/, about 0.1 s; compiling them when they changed, the first run only).
 * CPU is the figure to compare on a shared machine: wall time follows the load.
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
  load: number;
  ok: boolean;
}

/** One file in one checkout; CPU is bash's `times` for its children: every process waited for under it. */
function runFile(root: string, file: string): Promise<Run> {
  const load = os.loadavg()[0]!;
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const command = fs.existsSync(path.join(root, 'scripts', 'test.js')) ? 'node scripts/test.js' : 'node --import tsx --test';
    const script = `CI=true ${command} --test-reporter=dot "$1" >/dev/null 2>&1; rc=$?; times; exit $rc`;
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
}

const fmt = (n: number) => n.toFixed(1).padStart(6);
for (const file of args) {
  const results: Record<'before' | 'after', Run[]> = { before: [], after: [] };
  for (let r = 0; r < rounds; r++) {
    results.before.push(await runFile(before, file));
    results.after.push(await runFile(here, file));
  }
  const line = (side: 'before' | 'after') =>
    results[side].map((x) => `${fmt(x.cpu)} cpu ${fmt(x.wall)} wall (load ${x.load.toFixed(1)})${x.ok ? '' : ' FAILED'}`).join(' | ');
  const sum = (side: 'before' | 'after', k: 'cpu' | 'wall') => results[side].reduce((a, x) => a + x[k], 0);
  console.log(`${file}\n  before ${line('before')}\n  after  ${line('after')}\n  ratio after/before: cpu ${(sum('after', 'cpu') / sum('before', 'cpu')).toFixed(2)}, wall ${(sum('after', 'wall') / sum('before', 'wall')).toFixed(2)}`);
}
