/**
 * The local operators (docs/executor.md, Operators): what ckql applies to
 * the records a source gives. Each reads its input one batch at a time and
 * gives batches on; none holds more than one batch, except `distinct` (the
 * keys seen) and `sort` (its whole input, which it must see before the first
 * record is known).
 */
import type { FieldInfo, Row } from '../datastore/types.js';
import { canonicalText } from '../datastore/values.js';
import { closing } from '../engine/stream.js';
import { checkSignal } from './operator.js';
import type { Operator, Outcome } from './operator.js';

/** A record test made once the input's fields are known (a check of names and values may refuse them). */
export type MakeTest = (fields: readonly FieldInfo[]) => (row: Row, position: number) => boolean;

/**
 * Keeps the records `makeTest` passes (the residual `where`).
 * @example filter(scan, 'status != withdrawn', (fields) => residualTest(residual, fields))
 */
export function filter(input: Operator, detail: string, makeTest: MakeTest): Operator {
  return {
    kind: 'filter',
    detail,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      let keep: (row: Row, position: number) => boolean;
      try {
        keep = makeTest(upstream.fields);
      } catch (error) {
        await upstream.batches.return();
        throw error;
      }
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        let position = 0;
        for await (const batch of upstream.batches) {
          checkSignal(context);
          const kept: Row[] = [];
          for (const row of batch) if (keep(row, position++)) kept.push(row);
          if (kept.length > 0) yield kept;
        }
      }
      // A subset of the input: the input's count no longer holds.
      return { fields: upstream.fields, batches: closing(batches(), () => upstream.batches.return()) };
    },
  };
}

/**
 * The `select` list, in its order: each record rebuilt with those fields
 * (a field a record lacks is null).
 */
export function project(input: Operator, names: readonly string[]): Operator {
  const unique = [...new Set(names)];
  return {
    kind: 'project',
    detail: unique.join(', '),
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      const byId = new Map(upstream.fields.map((f) => [f.id, f]));
      const fields = unique.map((name) => byId.get(name) ?? { id: name, type: 'text' as const });
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        for await (const batch of upstream.batches) {
          checkSignal(context);
          yield batch.map((row) => {
            const out: Record<string, unknown> = {};
            // Defined, not assigned: a field named `__proto__` is a key like any other.
            for (const name of unique) Object.defineProperty(out, name, { value: Object.hasOwn(row, name) ? (row[name] ?? null) : null, enumerable: true, writable: true, configurable: true });
            return out as Row;
          });
        }
      }
      return { fields, batches: closing(batches(), () => upstream.batches.return()), ...(upstream.total === undefined ? {} : { total: upstream.total }) };
    },
  };
}

/**
 * The first record of each distinct value of every field, by canonical
 * text (docs/semantics.md: `=` compares so), in input order.
 */
export function distinct(input: Operator): Operator {
  return {
    kind: 'distinct',
    detail: 'first of each distinct record, by canonical text',
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      const names = upstream.fields.map((f) => f.id);
      const seen = new Set<string>();
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        for await (const batch of upstream.batches) {
          checkSignal(context);
          const kept: Row[] = [];
          for (const row of batch) {
            const key = JSON.stringify(names.map((name) => canonicalText(Object.hasOwn(row, name) ? row[name] : null)));
            if (seen.has(key)) continue;
            seen.add(key);
            kept.push(row);
          }
          if (kept.length > 0) yield kept;
        }
      }
      return { fields: upstream.fields, batches: closing(batches(), () => upstream.batches.return()) };
    },
  };
}

/** Options of `limit`. */
export interface LimitOptions {
  readonly offset: number;
  /** `Infinity` for every record */
  readonly limit: number;
  /** read on past the limit to count every record (`Outcome.matched`), giving no more of them */
  readonly count: boolean;
}

/**
 * Skips `offset` records, gives up to `limit`, and then stops reading, so a
 * source stops paging (unless `count` asks for the rest to be counted).
 */
export function limit(input: Operator, options: LimitOptions): Operator {
  const { offset, count } = options;
  const end = offset + options.limit;
  const detail = [
    Number.isFinite(options.limit) ? String(options.limit) : 'none (every record)',
    offset > 0 ? `offset ${offset}` : '',
    count ? 'then count the rest' : Number.isFinite(options.limit) ? 'then stop reading' : '',
  ].filter((part) => part !== '').join(', ');
  return {
    kind: 'limit',
    detail,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      let seen = 0;
      let outcome: Outcome = {};
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        try {
          // Nothing asked for: the page read to open the source (its fields) is all (a filter would read on to its first match).
          if (end === 0 && !count) return;
          for await (const batch of upstream.batches) {
            checkSignal(context);
            const from = Math.max(0, offset - seen);
            const to = Math.min(batch.length, end - seen);
            seen += batch.length;
            if (from < to) yield from === 0 && to === batch.length ? batch : batch.slice(from, to);
            if (seen >= end && !count) {
              // The rest of this batch says whether more exist; past it, only another page would.
              outcome = { more: seen > end ? true : undefined };
              return;
            }
          }
          outcome = { matched: seen, more: seen > end };
        } finally {
          await upstream.batches.return();
        }
      }
      return {
        fields: upstream.fields,
        batches: closing(batches(), () => upstream.batches.return()),
        ...(upstream.total === undefined ? {} : { total: upstream.total }),
        ...(upstream.facets === undefined ? {} : { facets: upstream.facets }),
        // A source that counted up front (an engine, a whole request) says it all.
        outcome: () => (upstream.total === undefined ? outcome : { matched: upstream.total, more: upstream.total > end }),
      };
    },
  };
}
