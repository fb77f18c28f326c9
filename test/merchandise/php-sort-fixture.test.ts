import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { IN_CI } from '../helper.js';

const SCRIPT = fileURLToPath(new URL('./php-sort-cases.php', import.meta.url));
const FIXTURE = new URL('./php-sort-cases.json', import.meta.url);

function phpVersion(): string | null {
  try {
    return execFileSync('php', ['-r', 'echo PHP_VERSION;'], { encoding: 'utf8' });
  } catch {
    return null;
  }
}

const version = phpVersion();
if (!version && IN_CI) throw new Error('php-cli is required in CI (.ci/run installs it) but `php` did not run');

// The fixture is what real PHP does; this proves it still is, and that the committed file is
// exactly what its script prints, so it can be regenerated rather than hand-edited.
test('php-sort-cases.json is what php-sort-cases.php prints with the installed PHP', { skip: version ? false : 'php-cli is not installed (apt-get install php-cli)' }, () => {
  const fresh = JSON.parse(execFileSync('php', [SCRIPT], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as { cases: unknown[] };
  const committed = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { cases: unknown[] };
  assert.ok(fresh.cases.length >= 300);
  assert.deepEqual(committed.cases, fresh.cases, `regenerate: php test/merchandise/php-sort-cases.php > test/merchandise/php-sort-cases.json (PHP ${version})`);
});
