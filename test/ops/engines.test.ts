import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import semver from 'semver';
import { ROOT } from '../process.js';

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
const engines = pkg.engines.node;
const lowest = semver.minVersion(engines)!.version;

/** Every installed package with a Node range of its own (old packages wrote `engines` as an array: no range). */
function nodeRanges(): Array<{ name: string; range: string }> {
  return Object.entries(lock.packages)
    .filter(([where, entry]) => where !== '' && typeof (entry.engines as { node?: string } | undefined)?.node === 'string')
    .map(([where, entry]) => ({ name: `${where.replace(/^.*node_modules\//, '')}@${entry.version}`, range: (entry.engines as { node: string }).node }));
}

test('package-lock.json records the engines of package.json', () => {
  assert.deepEqual((lock.packages[''] as { engines?: unknown }).engines, pkg.engines);
});

test(`no package in the lock needs a newer Node than engines allows (${engines})`, () => {
  const tooNew = nodeRanges().filter(({ range }) => !semver.satisfies(lowest, range));
  assert.deepEqual(tooNew, [], `these packages do not run on Node ${lowest}, the oldest version engines admits: raise engines or choose other versions (overrides in package.json)`);
});

test('the Node running the tests is one engines admits, and every package in the lock admits it', () => {
  assert.ok(semver.satisfies(process.version, engines), `Node ${process.version} is outside engines ${engines}`);
  const refuse = nodeRanges().filter(({ range }) => !semver.satisfies(process.version, range));
  assert.deepEqual(refuse, [], `these packages do not declare support for Node ${process.version}`);
});
