/**
 * The union scan (docs/expressions.md, Unions): the records of a union's
 * resources, each read by its own scan in turn, as one stream with the
 * union's fields (compile/union.ts). Which resource has which field is
 * known only from the portal, so it asks each for its fields first (a
 * `limit: 0` request each), then pushes down to each the conditions that
 * name only its own fields (`memberRequest`); a resource whose per-field
 * search names a field it lacks is not read at all. Like every source it
 * reads a resource only when its reader asks for more.
 */
import type { StringValue } from '../ast.js';
import type { FieldInfo, Row, SearchRequest } from '../datastore/types.js';
import { RESOURCE_FIELD, unionFields, widenedValue, writtenName } from '../compile/union.js';
import { closing } from '../engine/stream.js';
import { rowFactory } from '../engine/memory/row-shape.js';
import { checkSignal } from './operator.js';
import type { Operator, Stream } from './operator.js';
import type { SendPage } from './scan.js';

/** One resource of a union scan: how it is asked, and the scan of its request once that is known. */
export interface UnionScanMember {
  /** as written: `_resource`'s value, and where a type mismatch is told */
  readonly written: StringValue;
  /** the resource as its portal knows it (without a source's name) */
  readonly resource: string;
  readonly send: SendPage;
  /** its request, from its fields; undefined: none of its records can match */
  readonly request: (fields: readonly string[]) => SearchRequest | undefined;
  readonly scan: (request: SearchRequest) => Operator;
}

/**
 * The union's records: each member's scan in turn, every record given the
 * union's fields (null where its resource lacks one, numbers widened) and
 * `_resource`. `wanted`: the fields the plan reads (undefined: every one);
 * `pushed`: the side's conditions as written, for explain.
 * @example
 * unionScan([crime2021, crime2022], ['_id', 'offense'])
 * // scan union of crime_2021, crime_2022: {"resource_id":"crime_2021",…} then {"resource_id":"crime_2022",…}
 */
export function unionScan(members: readonly UnionScanMember[], wanted: readonly string[] | undefined, pushed?: string): Operator {
  const conditions = pushed === undefined ? '' : `, with the conditions of ${pushed} that name only its own fields`;
  return {
    kind: 'scan',
    detail: `union of ${members.map((m) => writtenName(m.written)).join(', ')}: each resource's fields asked first (a limit: 0 request each), then its records in turn${conditions}`,
    inputs: [],
    open: async (context): Promise<Stream> => {
      const own: FieldInfo[][] = [];
      for (const member of members) {
        checkSignal(context);
        context.stats.requests += 1;
        const head = await member.send({ resource_id: member.resource, limit: 0 }, context.signal);
        own.push([...(head.fields ?? [])]);
      }
      const all = unionFields(members.map((m, i) => ({ resource: m.written, fields: own[i]! })));
      const keep = wanted === undefined ? undefined : new Set([...wanted, RESOURCE_FIELD]);
      const fields = keep === undefined ? all : all.filter((f) => keep.has(f.id));
      // One generated object literal for every record of the union (a field named `__proto__` is a key like any other there).
      const make = rowFactory(fields.map((f) => f.id));
      let current: Stream | undefined;
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        for (const [i, member] of members.entries()) {
          const request = member.request(own[i]!.map((f) => f.id));
          if (request === undefined) continue;
          const types = new Map(own[i]!.map((f) => [f.id, f.type]));
          current = await member.scan(request).open(context);
          const reads = fields.map((field): ((row: Row) => unknown) => {
            const id = field.id;
            if (id === RESOURCE_FIELD) {
              const name = writtenName(member.written);
              return () => name;
            }
            const type = types.get(id);
            if (type === undefined) return () => null;
            return type === field.type ? (row) => row[id] ?? null : (row) => widenedValue(row[id] ?? null, field.type);
          });
          const values: unknown[] = new Array(reads.length);
          for await (const batch of current.batches) {
            checkSignal(context);
            yield batch.map((row) => {
              for (let f = 0; f < reads.length; f++) values[f] = reads[f]!(row);
              return make(values) as Row;
            });
          }
          current = undefined;
        }
      }
      return { fields, batches: closing(batches(), async () => { await current?.batches.return(); }) };
    },
  };
}
