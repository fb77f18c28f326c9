import { createHash } from 'node:crypto';
import { safeEqual } from '../security/crypto.js';
import { msg, ValidationError } from './errors.js';
import { sortPhp } from './php-sort.js';

/**
 * Merchandise API request signatures (spec 5.5, compatibility.md §3):
 *   lowercase hex SHA-256 of ( sorted values of every received parameter except `signature` ) + client_secret.
 *
 * - Values only, never keys; nested values (`title[en_US]`, `title[ru_RU]`) are flattened, each as the
 *   string received — so the input must be the body/query as parsed, before any validation coerces it.
 * - Two sort orders exist in the wild and both are accepted: plain UTF-16 code-unit order (JS
 *   `Array.prototype.sort()`) and PHP 8 `sort()` with SORT_REGULAR, where numeric strings compare as
 *   numbers ("30" < "150") and everything else byte-wise (src/domain/php-sort.ts).
 */
export type SignatureOrder = 'js' | 'php';

/**
 * What one signed request may carry. A real request has a dozen values two levels deep
 * (`title[en_US]`); the limits only stop hostile bodies from costing more than they are worth.
 */
export const SIGNED_LIMITS = { depth: 32, values: 1000 } as const;

/**
 * The signed values of a parsed body or query, in received order, without the top-level `signature`.
 * Leaves become strings the way a client's `values.join('')` (JS) or `implode('', $values)` (PHP)
 * sees them: null becomes "" (both), numbers their shortest decimal form, booleans "true"/"false"
 * (JSON bodies come from JS clients; form bodies carry only strings anyway).
 *
 * Iterative, so no nesting can exhaust the stack; deeper than `limits.depth` or more than
 * `limits.values` values is a 400 on the top-level parameter that carries it (compatibility.md §1).
 */
export function signedValues(params: unknown, exclude: string = 'signature', limits = SIGNED_LIMITS): string[] {
  const out: string[] = [];
  const topLevel: Array<[string, unknown]> =
    params && typeof params === 'object' && !Array.isArray(params)
      ? Object.entries(params as Record<string, unknown>).filter(([key]) => key !== exclude)
      : params === undefined
        ? []
        : [['body', params]];
  for (const [field, root] of topLevel) {
    // Depth-first, children pushed in reverse, so values come out in received order.
    const stack: Array<[value: unknown, depth: number]> = [[root, 1]];
    while (stack.length) {
      const [value, depth] = stack.pop()!;
      if (value !== null && typeof value === 'object') {
        if (depth >= limits.depth) throw ValidationError.field(field, msg('err.signature.too_deep', { field, max: limits.depth }));
        const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
        for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], depth + 1]);
        continue;
      }
      if (out.length >= limits.values) throw ValidationError.field(field, msg('err.signature.too_many', { max: limits.values }));
      out.push(value === null || value === undefined ? '' : typeof value === 'string' ? value : String(value));
    }
  }
  return out;
}

/** JS clients: `values.sort()` — UTF-16 code-unit order. */
export function sortJs(values: readonly string[]): string[] {
  return [...values].sort();
}

export function signatureFor(values: readonly string[], clientSecret: string, order: SignatureOrder): string {
  const sorted = order === 'js' ? sortJs(values) : sortPhp(values);
  return createHash('sha256').update(sorted.join('') + clientSecret, 'utf8').digest('hex');
}

/**
 * True when `signature` matches either sort order. Both digests are always computed and compared in
 * constant time, so timing reveals neither which order matched nor how much of a guess was right.
 */
export function verifySignature(values: readonly string[], clientSecret: string, signature: string): boolean {
  const given = signature.trim().toLowerCase();
  const js = safeEqual(given, signatureFor(values, clientSecret, 'js'));
  const php = safeEqual(given, signatureFor(values, clientSecret, 'php'));
  return js || php;
}
