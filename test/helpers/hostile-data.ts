/**
 * Generated data files of the kinds that have broken loaders: NUL bytes,
 * bytes that are not UTF-8, quotes and line breaks in cells, numbers beyond
 * a double and beyond PostgreSQL's `numeric`, dates PostgreSQL has not got,
 * nesting past the bound, keys CKAN keeps for itself, JSON that is not a
 * record. Each is named `d.csv`, `d.ndjson` or `d.json` (resource `d`).
 */
import fc from 'fast-check';

/** Cells that PostgreSQL or the loaders have been known to choke on, and plain ones. */
const hostileCell = fc.oneof(
  fc.constantFrom('a', '1', '2.5', '', '1e400', '-1.5e400', '1e131072', '1e-400', '-0', '9007199254740993', 'true', '0000-01-01', '2020-02-30', '2020-01-01T25:00:00', 'é', ' x '),
  fc.constantFrom('"', '""', '"a""b"', ',', '\n', '\r', '\r\n', '\u0000', '\t', ';'),
  fc.string({ maxLength: 6 }),
);
const csvFile = fc
  .record({
    // (a table too wide for PostgreSQL: test/engine/sql/hostile-data.test.ts)
    columns: fc.integer({ min: 1, max: 4 }),
    rows: fc.array(fc.array(hostileCell, { minLength: 1, maxLength: 4 }), { maxLength: 5 }),
    bad: fc.option(fc.nat(), { nil: undefined, freq: 2 }),
  })
  .map(({ columns, rows, bad }) => {
    const header = Array.from({ length: columns }, (_, k) => `c${k}`).join(',');
    const text = [header, ...rows.map((cells) => Array.from({ length: columns }, (_, k) => cells[k % cells.length]).join(','))].join('\n') + '\n';
    const bytes = Buffer.from(text);
    // a byte no UTF-8 character has, somewhere after the header
    return bad === undefined ? bytes : Buffer.concat([bytes.subarray(0, header.length + 1 + (bad % (bytes.length - header.length))), Buffer.from([0xff]), bytes.subarray(header.length + 1 + (bad % (bytes.length - header.length)))]);
  });
const jsonRecord = fc.oneof(
  fc.constantFrom(
    '{"a":1e400}', '{"a":1e131072}', '{"a":"x\\u0000y"}', '{"a":"\\ud800"}', '{"a":99999999999999999999}', '{"a":1,"a":"two"}', '{"_id":"x"}',
    '{"":1}', '{"_x":1}', '{"a":[1,"b",null]}', '{"a":{"b":[1,{"c":2}]}}', `{"a":${'['.repeat(1_100)}${']'.repeat(1_100)}}`, 'not json', '[1,2]', '{"a":"0000-01-01"}',
  ),
  fc.record({ a: fc.oneof(fc.string({ maxLength: 5 }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null)) }).map((record) => JSON.stringify(record)),
);
export const hostileDataFiles: fc.Arbitrary<{ readonly name: string; readonly body: Buffer }> = fc.oneof(
  csvFile.map((body) => ({ name: 'd.csv', body })),
  fc.array(jsonRecord, { minLength: 1, maxLength: 5 }).map((lines) => ({ name: 'd.ndjson', body: Buffer.from(lines.join('\n')) })),
  fc.array(jsonRecord, { minLength: 1, maxLength: 5 }).map((lines) => ({ name: 'd.json', body: Buffer.from(`[${lines.join(',')}]`) })),
);

