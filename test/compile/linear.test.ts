/**
 * Planning grows with the query, not with its square: `group by`, select
 * lists, joins and facets of thousands of fields. Measured without a clock:
 * every read of a property of the query's tree is counted (the tree is
 * wrapped in proxies that count), and the count for 4n fields must stay
 * well under the 16 times a quadratic pass gives (a linear one gives 4).
 */
import { describe, expect, it } from 'vitest';
import type { Query } from '../../src/ast.js';
import { plan } from '../../src/compile/compile.js';
import { parse } from '../../src/syntax/parse.js';

/** `query`'s tree (copied, so no node is frozen) behind proxies that count each property read, the same proxy for each node. */
function counted(query: Query): { query: Query; reads: () => number } {
  let reads = 0;
  const proxies = new WeakMap<object, object>();
  const wrap = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    let proxy = proxies.get(value);
    if (proxy === undefined) {
      proxy = new Proxy(value, {
        get(target, key, receiver) {
          reads++;
          return wrap(Reflect.get(target, key, receiver));
        },
      });
      proxies.set(value, proxy);
    }
    return proxy;
  };
  return { query: wrap(structuredClone(query)) as Query, reads: () => reads };
}

const fields = (n: number, make: (k: number) => string): string => Array.from({ length: n }, (_, k) => make(k)).join(', ');

const shapes: Record<string, (n: number) => string> = {
  'group by n fields, select them': (n) => `from t group by ${fields(n, (k) => `f${k}`)} select ${fields(n, (k) => `f${k}`)}, count(*) as n`,
  'select n fields': (n) => `from t select ${fields(n, (k) => `f${k}`)}`,
  'a join selecting n fields of each side': (n) => `from t a join u b on a.k = b.k select ${fields(n, (k) => `a.f${k}, b.f${k}`)}`,
  'n facets': (n) => `from t facet ${fields(n, (k) => `f${k}`)}`,
  'n sums, ordered by each': (n) => `from t group by g select g, ${fields(n, (k) => `sum(f${k})`)} order by ${fields(n, (k) => `sum(f${k})`)}`,
};

describe('planning reads the query a bounded number of times per field', () => {
  for (const [name, text] of Object.entries(shapes)) {
    it(name, () => {
      const work = (n: number): number => {
        const { query, reads } = counted(parse(text(n)));
        plan(query, { target: 'ckan-2.11' });
        return reads();
      };
      const small = work(60);
      const large = work(240);
      expect(small).toBeGreaterThan(60);
      expect(large / small).toBeLessThan(6);
    });
  }
});
