import { INPUT_CURRENCIES, isInputCurrency } from '../../domain/currency.js';
import { ValidationError } from '../../domain/errors.js';
import { AmountError, toMinor } from '../../domain/money.js';

/**
 * Reads Merchandise API parameters from a parsed body (form, multipart or JSON) and collects every
 * problem as Laravel-style `{field: [messages]}` (INTEROP §1), so one 400 lists them all.
 * Form and multipart values arrive as strings, JSON ones may be numbers: both are accepted.
 */
export class FieldReader {
  readonly errors: Record<string, string[]> = {};

  constructor(readonly body: Record<string, unknown>) {}

  fail(field: string, message: string): undefined {
    (this.errors[field] ??= []).push(message);
    return undefined;
  }

  has(field: string): boolean {
    return this.body[field] !== undefined;
  }

  /** Absent → undefined; present but empty or null → null (ConvertEmptyStringsToNull semantics). */
  private raw(field: string): unknown {
    const value = this.body[field];
    if (value === undefined) return undefined;
    if (value === null || value === '') return null;
    return value;
  }

  private text(field: string, value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return this.fail(field, `The ${field} field must be a string.`);
  }

  requiredMissing(field: string): undefined {
    return this.fail(field, `The ${field} field is required.`);
  }

  string(field: string, opts: { required?: boolean; max: number }): string | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) return opts.required ? this.requiredMissing(field) : undefined;
    const text = this.text(field, value);
    if (text === undefined) return undefined;
    if (text.length > opts.max) return this.fail(field, `The ${field} field must not be greater than ${opts.max} characters.`);
    return text;
  }

  /** A nullable string: `null` means "clear it". */
  nullableString(field: string, max: number): string | null | undefined {
    const value = this.raw(field);
    if (value === null) return null;
    return this.string(field, { max });
  }

  /** Flags are integers 0 or 1 (spec §2). */
  flag(field: string): 0 | 1 | undefined {
    const value = this.raw(field);
    if (value === undefined) return undefined;
    if (value === 0 || value === '0') return 0;
    if (value === 1 || value === '1') return 1;
    return this.fail(field, `The ${field} field must be 0 or 1.`);
  }

  integer(field: string, opts: { required?: boolean; min: number; max: number }): number | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) return opts.required ? this.requiredMissing(field) : undefined;
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d{1,16}\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n)) return this.fail(field, `The ${field} field must be an integer.`);
    if (n < opts.min) return this.fail(field, `The ${field} field must be at least ${opts.min}.`);
    if (n > opts.max) return this.fail(field, `The ${field} field must not be greater than ${opts.max}.`);
    return n;
  }

  /** A non-negative decimal with at most two places, as integer hundredths (minor units). */
  amount(field: string, opts: { required?: boolean; maxMinor?: number; maxLabel?: string }): number | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) return opts.required ? this.requiredMissing(field) : undefined;
    if (typeof value !== 'string' && typeof value !== 'number') return this.fail(field, `The ${field} field must be a number.`);
    if ((typeof value === 'number' && value < 0) || (typeof value === 'string' && value.trim().startsWith('-'))) {
      return this.fail(field, `The ${field} field must be at least 0.`);
    }
    let minor: number;
    try {
      minor = toMinor(value);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      return this.fail(field, /decimal/.test(err.message) ? `The ${field} field must have at most two decimal places.` : /large/.test(err.message) ? `The ${field} field is too large.` : `The ${field} field must be a number.`);
    }
    if (opts.maxMinor !== undefined && minor > opts.maxMinor) return this.fail(field, `The ${field} field must not be greater than ${opts.maxLabel ?? opts.maxMinor / 100}.`);
    return minor;
  }

  /** Spec §2: input currencies (EUR USD RUB BRL TRY) for merchandise and sales (INTEROP §3). */
  currency(field: string, opts: { required?: boolean }): string | undefined {
    const value = this.raw(field);
    if (value === undefined || value === null) return opts.required ? this.requiredMissing(field) : undefined;
    if (!isInputCurrency(value)) return this.fail(field, `The selected ${field} is invalid; use one of ${INPUT_CURRENCIES.join(', ')}.`);
    return value;
  }

  throwIfInvalid(): void {
    if (Object.keys(this.errors).length) throw new ValidationError(this.errors);
  }
}
