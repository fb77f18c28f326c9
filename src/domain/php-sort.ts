/**
 * PHP 8 `sort($values)` with the default SORT_REGULAR flag, reproduced faithfully, for the
 * Merchandise API signature (src/domain/signature.ts): PHP clients sort the values they sign this
 * way. Sources: php-src Zend/zend_operators.c `zendi_smart_strcmp` + `_is_numeric_string_ex`,
 * Zend/zend_sort.c `zend_sort`, ext/standard/array.c stable fallback. Faithful matters: the
 * comparison is not transitive for mixed numeric/non-numeric strings ("9" < "1e1" numerically,
 * "1e1" < "1f" and "1f" < "9" byte-wise), so the result depends on the exact algorithm, not only on
 * the comparator. test/merchandise/php-sort-cases.json records what real PHP does; regenerate it
 * with test/merchandise/php-sort-cases.php.
 */

/** PHP's numeric-string reading (allow_errors = false): a long (exact, 64-bit) or a double. */
type PhpNumber = { kind: 'long'; value: bigint } | { kind: 'double'; value: number; overflow: -1 | 0 | 1 };

const PHP_WHITESPACE = new Set([' ', '\t', '\n', '\r', '\v', '\f']);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const MAX_LENGTH_OF_LONG = 20;
const LONG_MIN_DIGITS = '9223372036854775808';
// What zend_strtod consumes from the start of a numeric string.
const STRTOD_PREFIX = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;

/** `_is_numeric_string_ex(str, len, &l, &d, allow_errors=false, &oflow, NULL)` in PHP 8. */
export function phpNumericValue(s: string): PhpNumber | null {
  if (s.length === 0) return null;
  let p = 0;
  while (PHP_WHITESPACE.has(s[p]!)) p++;
  const start = p;
  const negative = s[p] === '-';
  if (s[p] === '-' || s[p] === '+') p++;

  let isDouble = false;
  let overflow: -1 | 0 | 1 = 0;
  let digits = 0;
  let digitsStart = p;
  if (isDigit(s[p])) {
    while (s[p] === '0') p++;
    digitsStart = p;
    let dpOrE = 0;
    for (; digits < MAX_LENGTH_OF_LONG; digits++, p++) {
      const c = s[p];
      if (isDigit(c)) continue;
      if (c === '.' && dpOrE < 1) {
        isDouble = true;
        break;
      }
      if ((c === 'e' || c === 'E') && dpOrE < 2) {
        let e = p + 1;
        if (s[e] === '-' || s[e] === '+') {
          p = e;
          e++;
        }
        if (isDigit(s[e])) {
          isDouble = true;
          break;
        }
      }
      break;
    }
    if (!isDouble && digits >= MAX_LENGTH_OF_LONG) {
      overflow = negative ? -1 : 1;
      isDouble = true;
    }
  } else if (s[p] === '.' && isDigit(s[p + 1])) {
    isDouble = true;
  } else {
    return null;
  }

  let doubleValue = 0;
  if (isDouble) {
    const match = STRTOD_PREFIX.exec(s.slice(start));
    if (!match) return null;
    doubleValue = Number(match[0]);
    p = start + match[0].length;
  }
  // PHP 8 allows trailing whitespace, nothing else.
  while (p < s.length && PHP_WHITESPACE.has(s[p]!)) p++;
  if (p !== s.length) return null;

  if (isDouble) return { kind: 'double', value: doubleValue, overflow };
  const digitText = s.slice(digitsStart, digitsStart + digits);
  if (digits === MAX_LENGTH_OF_LONG - 1) {
    // strcmp against the rest of the string, as php-src does (trailing whitespace included).
    const rest = s.slice(digitsStart);
    const cmp = rest < LONG_MIN_DIGITS ? -1 : rest === LONG_MIN_DIGITS ? 0 : 1;
    if (!(cmp < 0 || (cmp === 0 && negative))) {
      return { kind: 'double', value: Number(STRTOD_PREFIX.exec(s.slice(start))![0]), overflow: negative ? -1 : 1 };
    }
  }
  const magnitude = digits === 0 ? 0n : BigInt(digitText);
  return { kind: 'long', value: negative ? -magnitude : magnitude };
}

interface PhpItem {
  text: string;
  /** UTF-8 bytes, made on first byte-wise comparison. */
  bytes?: Buffer;
  number: PhpNumber | null;
  /** Position before sorting: PHP 8's sort is stable (ties keep their original order). */
  index: number;
}

const sign = (n: number) => (n > 0 ? 1 : n < 0 ? -1 : 0);

/** `zend_binary_strcmp`: memcmp of the UTF-8 bytes, then the shorter first. */
function byteCompare(a: PhpItem, b: PhpItem): number {
  return Buffer.compare((a.bytes ??= Buffer.from(a.text, 'utf8')), (b.bytes ??= Buffer.from(b.text, 'utf8')));
}

/** `zendi_smart_strcmp`: numeric strings numerically, otherwise `zend_binary_strcmp` on the UTF-8 bytes. */
function smartCompare(a: PhpItem, b: PhpItem): number {
  const x = a.number;
  const y = b.number;
  if (x && y) {
    const xo = x.kind === 'double' ? x.overflow : 0;
    const yo = y.kind === 'double' ? y.overflow : 0;
    const sameOverflow = xo !== 0 && xo === yo && x.kind === 'double' && y.kind === 'double' && x.value - y.value === 0;
    if (!sameOverflow) {
      if (x.kind === 'double' || y.kind === 'double') {
        let d1: number;
        let d2: number;
        if (x.kind === 'long') {
          if (yo) return -yo;
          d1 = Number(x.value);
          d2 = (y as { value: number }).value;
        } else if (y.kind === 'long') {
          if (xo) return xo;
          d1 = x.value;
          d2 = Number(y.value);
        } else {
          if (x.value === y.value && !Number.isFinite(x.value)) return byteCompare(a, b);
          d1 = x.value;
          d2 = y.value;
        }
        return sign(d1 - d2);
      }
      return x.value > y.value ? 1 : x.value < y.value ? -1 : 0;
    }
  }
  return byteCompare(a, b);
}

/** The comparator sort() hands zend_sort: SORT_REGULAR, then original position on ties. */
function phpCompare(a: PhpItem, b: PhpItem): number {
  const result = smartCompare(a, b);
  if (result !== 0) return result;
  return a.index > b.index ? 1 : a.index < b.index ? -1 : 0;
}

/** zend_sort (hybrid insertion sort / quicksort) over `items`, in place. */
class ZendSorter {
  constructor(private readonly a: PhpItem[]) {}

  private gt(i: number, j: number): boolean {
    return phpCompare(this.a[i]!, this.a[j]!) > 0;
  }

  private swap(i: number, j: number): void {
    const t = this.a[i]!;
    this.a[i] = this.a[j]!;
    this.a[j] = t;
  }

  private sort2(a: number, b: number): void {
    if (this.gt(a, b)) this.swap(a, b);
  }

  private sort3(a: number, b: number, c: number): void {
    if (!this.gt(a, b)) {
      if (!this.gt(b, c)) return;
      this.swap(b, c);
      if (this.gt(a, b)) this.swap(a, b);
      return;
    }
    if (!this.gt(c, b)) {
      this.swap(a, c);
      return;
    }
    this.swap(a, b);
    if (this.gt(b, c)) this.swap(b, c);
  }

  private sort4(a: number, b: number, c: number, d: number): void {
    this.sort3(a, b, c);
    if (this.gt(c, d)) {
      this.swap(c, d);
      if (this.gt(b, c)) {
        this.swap(b, c);
        if (this.gt(a, b)) this.swap(a, b);
      }
    }
  }

  private sort5(a: number, b: number, c: number, d: number, e: number): void {
    this.sort4(a, b, c, d);
    if (this.gt(d, e)) {
      this.swap(d, e);
      if (this.gt(c, d)) {
        this.swap(c, d);
        if (this.gt(b, c)) {
          this.swap(b, c);
          if (this.gt(a, b)) this.swap(a, b);
        }
      }
    }
  }

  private insertSort(base: number, n: number): void {
    switch (n) {
      case 0:
      case 1:
        return;
      case 2:
        return this.sort2(base, base + 1);
      case 3:
        return this.sort3(base, base + 1, base + 2);
      case 4:
        return this.sort4(base, base + 1, base + 2, base + 3);
      case 5:
        return this.sort5(base, base + 1, base + 2, base + 3, base + 4);
    }
    const start = base;
    const end = base + n;
    const sentry = start + 6;
    for (let i = start + 1; i < sentry; i++) {
      let j = i - 1;
      if (!this.gt(j, i)) continue;
      while (j !== start) {
        j--;
        if (!this.gt(j, i)) {
          j++;
          break;
        }
      }
      for (let k = i; k > j; k--) this.swap(k, k - 1);
    }
    for (let i = sentry; i < end; i++) {
      let j = i - 1;
      if (!this.gt(j, i)) continue;
      for (;;) {
        j -= 2;
        if (!this.gt(j, i)) {
          j++;
          if (!this.gt(j, i)) j++;
          break;
        }
        if (j === start) break;
        if (j === start + 1) {
          j--;
          if (this.gt(i, j)) j++;
          break;
        }
      }
      for (let k = i; k > j; k--) this.swap(k, k - 1);
    }
  }

  sort(base: number, n: number): void {
    for (;;) {
      if (n <= 16) {
        this.insertSort(base, n);
        return;
      }
      const start = base;
      const end = start + n;
      const offset = n >> 1;
      let pivot = start + offset;
      if (n >> 10) {
        const delta = offset >> 1;
        this.sort5(start, start + delta, pivot, pivot + delta, end - 1);
      } else {
        this.sort3(start, pivot, end - 1);
      }
      this.swap(start + 1, pivot);
      pivot = start + 1;
      let i = pivot + 1;
      let j = end - 1;
      partition: for (;;) {
        while (this.gt(pivot, i)) {
          i++;
          if (i === j) break partition;
        }
        j--;
        if (j === i) break partition;
        while (this.gt(j, pivot)) {
          j--;
          if (j === i) break partition;
        }
        this.swap(i, j);
        i++;
        if (i === j) break partition;
      }
      this.swap(pivot, i - 1);
      if (i - 1 - start < end - i) {
        this.sort(start, i - start - 1);
        base = i;
        n = end - i;
      } else {
        this.sort(i, end - i);
        base = start;
        n = i - start - 1;
      }
    }
  }
}

/** PHP clients: `sort($values)` (PHP 8, SORT_REGULAR), ties kept in received order. */
export function sortPhp(values: readonly string[]): string[] {
  const items: PhpItem[] = values.map((text, index) => ({ text, number: phpNumericValue(text), index }));
  new ZendSorter(items).sort(0, items.length);
  return items.map((item) => item.text);
}
