import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AmountError, roundMinor, toMajor, toMinor } from '../../src/domain/money.js';
import { convertMinor, crossRate, MissingRateError } from '../../src/domain/rates.js';

test('toMinor parses decimals exactly', () => {
  assert.equal(toMinor('12'), 1200);
  assert.equal(toMinor('12.5'), 1250);
  assert.equal(toMinor('12.05'), 1205);
  assert.equal(toMinor('0,99'), 99);
  assert.equal(toMinor(1.1), 110);
  assert.equal(toMinor(' 7.10 '), 710);
  assert.equal(toMinor('0.29'), 29); // 0.29 * 100 is 28.999999999999996 in floats
});

test('toMinor rejects what is not a plain amount', () => {
  for (const bad of ['', '-1', '1.234', '1e3', 'abc', '1.2.3', '١٢', '99999999999999', 'NaN', ' ', '+5']) {
    assert.throws(() => toMinor(bad), AmountError, bad);
  }
  assert.throws(() => toMinor(Number.NaN), AmountError);
  assert.throws(() => toMinor(-1), AmountError);
  assert.throws(() => toMinor(1e21), AmountError);
});

test('toMajor and roundMinor', () => {
  assert.equal(toMajor(1205), 12.05);
  assert.equal(roundMinor(100.5), 101);
  assert.equal(roundMinor(100.49999999999999), 101); // binary noise of 1.005 * 100
  assert.equal(roundMinor(100.4), 100);
});

test('conversions go through USD and round half-up to a minor unit', () => {
  const rates = { USD: 1, EUR: 0.9, RUB: 90 };
  assert.equal(convertMinor(1000, 'USD', 'EUR', rates), 900);
  assert.equal(convertMinor(1000, 'EUR', 'RUB', rates), 100000);
  assert.equal(convertMinor(1, 'RUB', 'EUR', rates), 0); // 0.01 RUB is 0.0001 EUR
  assert.equal(convertMinor(55, 'RUB', 'USD', rates), 1); // 0.61 cent rounds to 1
  assert.equal(convertMinor(777, 'EUR', 'EUR', rates), 777);
  assert.equal(crossRate('EUR', 'RUB', rates), 100);
  assert.throws(() => convertMinor(1, 'USD', 'KZT', rates), MissingRateError);
});
