import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { phpNumericValue, sortPhp } from '../../src/domain/php-sort.js';
import { signatureFor, signedValues, SIGNED_LIMITS, sortJs, verifySignature } from '../../src/domain/signature.js';
import { sha256 } from './fixture.js';

// Inputs and the order real PHP 8 `sort()` put them in, made by php-sort-cases.php beside this file
// (php-sort-fixture.test.ts checks the file is what that script prints today).
const PHP_CASES = JSON.parse(readFileSync(new URL('./php-sort-cases.json', import.meta.url), 'utf8')) as { cases: Array<{ input: string[]; php: string[] }> };

test('sortPhp reproduces PHP 8 sort() on every recorded case', () => {
  assert.ok(PHP_CASES.cases.length >= 300);
  for (const { input, php } of PHP_CASES.cases) assert.deepEqual(sortPhp(input), php, JSON.stringify(input));
});

test('the two orders differ where numeric strings of different lengths meet', () => {
  assert.deepEqual(sortJs(['30', '150', 'abc']), ['150', '30', 'abc']);
  assert.deepEqual(sortPhp(['30', '150', 'abc']), ['30', '150', 'abc']);
  // PHP compares the whole string numerically or not at all: "10" vs "9a" is byte-wise.
  assert.deepEqual(sortPhp(['9a', '10', '9']), ['9', '10', '9a']);
  // Non-transitive comparisons: the result is what zend_sort's exact steps produce.
  assert.deepEqual(sortPhp(['1e1', '9', '1f']), ['1f', '9', '1e1']);
  // Equal numbers keep their received order (PHP 8 sort is stable).
  assert.deepEqual(sortPhp(['1.0', '01', '1']), ['1.0', '01', '1']);
  // UTF-16 code units (JS) vs UTF-8 bytes (PHP) disagree above the BMP.
  assert.deepEqual(sortJs(['\uffff', '😀']), ['😀', '\uffff']);
  assert.deepEqual(sortPhp(['\uffff', '😀']), ['\uffff', '😀']);
});

test('phpNumericValue follows PHP 8 numeric strings', () => {
  assert.deepEqual(phpNumericValue('42'), { kind: 'long', value: 42n });
  assert.deepEqual(phpNumericValue(' 42 '), { kind: 'long', value: 42n }); // leading and (PHP 8) trailing whitespace
  assert.deepEqual(phpNumericValue('-007'), { kind: 'long', value: -7n });
  assert.deepEqual(phpNumericValue('1e3'), { kind: 'double', value: 1000, overflow: 0 });
  assert.deepEqual(phpNumericValue('.5'), { kind: 'double', value: 0.5, overflow: 0 });
  assert.deepEqual(phpNumericValue('5.'), { kind: 'double', value: 5, overflow: 0 });
  assert.deepEqual(phpNumericValue('9223372036854775807'), { kind: 'long', value: 9223372036854775807n });
  assert.deepEqual(phpNumericValue('9223372036854775808'), { kind: 'double', value: 9223372036854775808, overflow: 1 });
  for (const text of ['', ' ', '12abc', '0x1A', '1e', '1e+', 'abc', '1 1', '--1', 'inf', '.']) assert.equal(phpNumericValue(text), null, JSON.stringify(text));
});

test('signedValues flattens nested values in received order and leaves out signature', () => {
  assert.deepEqual(
    signedValues({ b: '2', title: { en_US: 'Hat', ru_RU: 'Шапка' }, signature: 'x', list: ['a', ['b']], n: 5, f: false, z: null }),
    ['2', 'Hat', 'Шапка', 'a', 'b', '5', 'false', ''],
  );
  assert.deepEqual(signedValues(undefined), []);
});

test('signatureFor: sorted values, concatenated, secret appended, SHA-256 lowercase hex', () => {
  const values = ['30', '150', 'b', 'a'];
  assert.equal(signatureFor(values, 's3cret', 'js'), sha256('15030ab' + 's3cret'));
  assert.equal(signatureFor(values, 's3cret', 'php'), sha256('30150ab' + 's3cret'));
  assert.match(signatureFor(values, 's3cret', 'js'), /^[0-9a-f]{64}$/);
});

test('verifySignature accepts either order and nothing else', () => {
  const values = ['30', '150', 'Hoodie'];
  const js = sha256('15030Hoodie' + 'k');
  const php = sha256('30150Hoodie' + 'k');
  assert.notEqual(js, php);
  assert.equal(verifySignature(values, 'k', js), true);
  assert.equal(verifySignature(values, 'k', php), true);
  assert.equal(verifySignature(values, 'k', js.toUpperCase()), true, 'hex case does not matter');
  const flipped = js.slice(0, 10) + (js[10] === '0' ? '1' : '0') + js.slice(11);
  assert.equal(verifySignature(values, 'k', flipped), false);
  assert.equal(verifySignature(values, 'other', js), false);
  assert.equal(verifySignature([...values, 'extra'], 'k', js), false);
  assert.equal(verifySignature(values, 'k', ''), false);
});

test('signedValues walks any nesting without recursion, and caps depth and count with a 400 on the parameter', () => {
  let deep: unknown = 'leaf';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.throws(
    () => signedValues({ ok: '1', title: deep }),
    (err: Error & { status?: number; errors?: Record<string, string[]> }) => err.status === 400 && Object.keys(err.errors!).join() === 'title' && /nested too deeply/.test(err.message),
  );
  // The deepest accepted shape: a leaf at depth SIGNED_LIMITS.depth.
  let limit: unknown = 'leaf';
  for (let i = 1; i < SIGNED_LIMITS.depth; i++) limit = { k: limit };
  assert.deepEqual(signedValues({ a: limit }), ['leaf']);
  assert.throws(() => signedValues({ a: { k: limit } }), /nested too deeply/);

  const many = Object.fromEntries(Array.from({ length: SIGNED_LIMITS.values }, (_, i) => [`k${i}`, String(i)]));
  assert.equal(signedValues(many).length, SIGNED_LIMITS.values);
  assert.throws(() => signedValues({ ...many, list: ['one more'] }), (err: Error & { errors?: Record<string, string[]> }) => Object.keys(err.errors!).join() === 'list' && /too many values/.test(err.message));
  // A JSON body that is not an object still has its values signed.
  assert.deepEqual(signedValues(['a', { b: 'c' }]), ['a', 'c']);
});
