import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

// V8 builds an object literal whose own keys come before a spread one property at a time, a new
// hidden class per key: for a catalog of hundreds of keys that was about 9 MB of transient heap at
// every start, kept by the process as RSS (11 MiB for en_US and ru_RU; bench/startup.ts). A spread
// that opens the literal (a copy to add to, as es_US does) is cheap; one after the keys is not —
// merge such an object with Object.assign after the literal.
test('no catalog spreads an object after its own keys', () => {
  const dir = new URL('../../src/i18n/catalogs/', import.meta.url);
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const lines = fs.readFileSync(new URL(file, dir), 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('//'));
    const late = lines.filter((line, i) => /^\s*\.\.\.[\w$.]+,?\s*$/.test(line) && !lines[i - 1]!.trimEnd().endsWith('{'));
    assert.deepEqual(late, [], `${file} spreads an object after the literal's own keys; merge it with Object.assign`);
  }
});
