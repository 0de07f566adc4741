/**
 * The buckets of docs/aggregates.md as PostgreSQL computes them:
 * `date_trunc(unit, f::timestamp)` (no time zone: CKAN's timestamps have
 * none), written as the timestamp its period starts at, and
 * `floor(f::numeric / w) * w`, exactly.
 */
import { validationError } from '../errors.js';
import { decimalOf, decimalValue, floorBucket, type Decimal } from './decimal.js';
import { canonicalText, typeReading } from './values.js';

export type DateUnit = 'year' | 'month' | 'week' | 'day';

const readTimestamp = typeReading('timestamp')!.read;

/**
 * The start of the year, month, ISO week (Monday) or day a date or
 * timestamp falls in, as `YYYY-MM-DDTHH:MM:SS`; null for null. A value that
 * is not a date is refused as PostgreSQL refuses `'…'::timestamp` (409).
 * @example dateBucket('2023-09-07T10:30:00', 'month') // '2023-09-01T00:00:00'
 * @example dateBucket('2023-09-07', 'week') // '2023-09-04T00:00:00' (a Monday)
 */
export function dateBucket(value: unknown, unit: DateUnit): string | null {
  if (value === null || value === undefined) return null;
  const ms = readTimestamp(value);
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw validationError('query', `invalid input syntax for type timestamp: ${JSON.stringify(canonicalText(value))}`);
  }
  const at = new Date(ms);
  const year = at.getUTCFullYear();
  let start: number;
  switch (unit) {
    case 'year':
      start = Date.UTC(year, 0, 1);
      break;
    case 'month':
      start = Date.UTC(year, at.getUTCMonth(), 1);
      break;
    case 'day':
      start = Date.UTC(year, at.getUTCMonth(), at.getUTCDate());
      break;
    case 'week': {
      const day = Date.UTC(year, at.getUTCMonth(), at.getUTCDate());
      start = day - ((at.getUTCDay() + 6) % 7) * 86_400_000;
      break;
    }
  }
  return timestampText(start);
}

function timestampText(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/**
 * `floor(f / width) * width`, exactly; null for null. A value that is not
 * a number is refused as PostgreSQL refuses `'…'::numeric` (409).
 * @example numberBucket(7.25, decimalOf(2.5)!) // 5
 * @example numberBucket(0.3, decimalOf(0.1)!) // 0.3
 */
export function numberBucket(value: unknown, width: Decimal): number | string | null {
  if (value === null || value === undefined) return null;
  const d = decimalOf(value);
  if (d === undefined) throw validationError('query', `invalid input syntax for type numeric: ${JSON.stringify(canonicalText(value))}`);
  return decimalValue(floorBucket(d, width));
}

/** A bucket function over values, for a date unit or a width. */
export function bucketFunction(by: { readonly unit: DateUnit } | { readonly width: number }): (value: unknown) => string | number | null {
  if ('unit' in by) {
    const unit = by.unit;
    return (value) => dateBucket(value, unit);
  }
  const width = decimalOf(by.width)!;
  return (value) => numberBucket(value, width);
}
