/** mulberry32: a small seeded generator, so a fuzz run is the same run every time. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Values a hostile client sends where a field is expected, from the issue 9 attack run and beyond. */
export const HOSTILE_SCALARS: readonly string[] = [
  '', ' ', '0', '-1', '1', '2', '1e309', '-1e309', 'Infinity', 'NaN', '1e3', '0x10', '1.5', '99999999999999999999999', '9007199254740993',
  'true', 'null', 'undefined', '[]', '{}', '__proto__', 'constructor', 'prototype', '%00', '\u0000', '\u202e', '😀'.repeat(40),
  '<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "' OR 1=1 --", '../../etc/passwd', '//evil.example/', '/\t/evil.example',
  'javascript:alert(1)', 'https://evil.example/x', 'http://[::1]:0/', '\r\nSet-Cookie: x=1', 'a'.repeat(300), 'b'.repeat(70_000),
  '$alerts:donation_1', '$widget:alerts_1', 'USD', 'RUB', 'XXX', 'en_US', 'S256', 'plain', 'code', 'token', 'authorization_code',
  'client_credentials', 'refresh_token', 'oauth-user-show oauth-donation-index', '2026-13-45 25:61:61', '-0', '00001', ' 1 ',
];

export const HOSTILE_KEYS: readonly string[] = [
  '__proto__', '__proto__[admin]', 'constructor[prototype][admin]', 'a[b][c][d][e][f][g]', 'x[]', 'x[999]', 'x[-1]', '[]', '[', ']', '',
  'title[en_US]', 'title[en_US][x]', 'scope[0]', 'scope[]', 'signature', 'client_secret', 'password', 'next', '_csrf', 'page',
];
