/**
 * The language service, function by function, against what the parser,
 * the compiler and the lexer say on their own: exact spans, fixes that make
 * the query parse, names quoted as the lexer reads them back.
 */
import { describe, expect, it } from 'vitest';
import { complete, diagnose, format, highlight, hover, type Diagnostic, type LanguageContext } from '../../src/language-service/index.js';
import { hasKeywordHelp } from '../../src/language-service/keyword-help.js';
import { parse } from '../../src/syntax/parse.js';
import { keywordTokens, softKeywordTokens } from '../../src/syntax/tokens.js';

const courses = {
  id: '4798d5aa-1c0e-4f51-9a6b-2f3c8a9e0d11',
  alias: 'courses',
  total: 40,
  fields: [
    { id: 'subject', type: 'text', info: { label: 'Subject area', notes: 'The department that teaches it.' } },
    { id: 'credits', type: 'numeric' },
    { id: 'level', type: 'int4' },
    { id: 'online', type: 'bool' },
    { id: 'start_date', type: 'date' },
    { id: 'school year', type: 'text' },
    { id: 'language', type: 'text' },
    { id: 'first', type: 'text' },
    { id: 'count', type: 'int' },
  ],
};
const context: LanguageContext = {
  allResources: true,
  resources: [courses, { id: 'schools' }],
  samples: (resource, field) => (resource === 'courses' && field === 'subject' ? ['math', 'physics', 'Köln', 2020] : undefined),
};

/** The text with a diagnostic's first fix applied. */
function applied(text: string, diagnostic: Diagnostic): string {
  const edits = [...diagnostic.fixes[0]!.edits].sort((a, b) => b.span.start - a.span.start);
  return edits.reduce((out, edit) => out.slice(0, edit.span.start) + edit.text + out.slice(edit.span.end), text);
}

function spanText(text: string, d: { span: { start: number; end: number } }): string {
  return text.slice(d.span.start, d.span.end);
}

describe('diagnose', () => {
  it('reports the parser\'s error with its code, span and hint, and a fix that makes the query parse', () => {
    const cases: [string, string, string][] = [
      ['from courses wher subject = math', 'wher', 'from courses where subject = math'],
      ['from courses where subject = limit', 'limit', 'from courses where subject = "limit"'],
      ['from courses where select = math', 'select', 'from courses where `select` = math'],
      ['from courses where "subject" = math', '"subject"', 'from courses where subject = math'],
      ['from courses where subject = (math, physics)', '(', 'from courses where subject in (math, physics)'],
      ['from courses where subject != (math, physics)', '(', 'from courses where subject not in (math, physics)'],
      ['from courses where subject = "math', '"math', 'from courses where subject = "math"'],
      ['from courses where `school year = 1', '`school year = 1', 'from courses where `school year` = 1'],
      ['from courses where subject == math', '=', 'from courses where subject = math'],
      ['from courses where subject in (a, b,)', ')', 'from courses where subject in (a, b)'],
      ['from courses where subject = a && level = 1', '&', 'from courses where subject = a and level = 1'],
      ['from courses where subject = "a\\qb"', '\\q', 'from courses where subject = "a\\\\qb"'],
    ];
    for (const [text, found, fixed] of cases) {
      const [first, ...rest] = diagnose(text);
      expect(rest, text).toEqual([]);
      expect(first?.severity, text).toBe('error');
      expect(spanText(text, first!), text).toBe(found);
      let message: unknown;
      try {
        parse(text);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(first?.message, text).toBe(message);
      expect(first?.fixes.length, text).toBeGreaterThan(0);
      expect(applied(text, first!), text).toBe(fixed);
      expect(() => parse(fixed), fixed).not.toThrow();
    }
  });

  it('marks an error at the end of the text as incomplete, so a front end can show it gently', () => {
    const [d] = diagnose('from courses where');
    expect(d).toMatchObject({ code: 'UNEXPECTED_END_OF_INPUT', incomplete: true, span: { start: 18, end: 18 } });
    expect(diagnose('from courses where subject = limit')[0]?.incomplete).toBeUndefined();
  });

  it('checks resources and fields against the context, with the near names as fixes', () => {
    const text = 'from courses where subjet = math select titel order by levl';
    const found = diagnose(text, context);
    expect(found.map((d) => [d.code, spanText(text, d), d.severity])).toEqual([
      ['UNKNOWN_FIELD', 'subjet', 'error'],
      ['UNKNOWN_FIELD', 'titel', 'error'],
      ['UNKNOWN_FIELD', 'levl', 'error'],
    ]);
    expect(found[0]).toMatchObject({ message: '"courses" has no field "subjet"', hint: 'did you mean "subject"?' });
    expect(applied(text, found[0]!)).toBe('from courses where subject = math select titel order by levl');
    expect(found[1]!.fixes).toEqual([]);
    expect(found[1]!.hint).toContain('courses has the fields subject, credits');
    // A field that needs backticks is fixed to one.
    const quoted = diagnose('from courses where `school yaer` = 1', context)[0]!;
    expect(applied('from courses where `school yaer` = 1', quoted)).toBe('from courses where `school year` = 1');

    const resource = diagnose('from corses limit 1', context);
    expect(resource).toMatchObject([{ code: 'UNKNOWN_RESOURCE', span: { start: 5, end: 11 }, severity: 'error' }]);
    expect(applied('from corses limit 1', resource[0]!)).toBe('from courses limit 1');
    // Without the whole list (a portal lists few), an unknown name is not an error; nor are fields not known yet.
    expect(diagnose('from corses limit 1', { resources: [courses] })).toEqual([]);
    // A resource of another source (`name:resource`) is not this source's to know.
    expect(diagnose('from portal:corses e join courses c on e.code = c.code limit 1', context)).toEqual([]);
    expect(diagnose('from schools where anything = 1', context)).toEqual([]);
    // `_id` is always a field; `rank` is one with a search.
    expect(diagnose('from courses where _id = 1 order by rank', context).map((d) => d.code)).toEqual(['UNKNOWN_FIELD']);
    expect(diagnose('from courses search "x" order by rank', context)).toEqual([]);
  });

  it('warns about values the column cannot read (a portal answers 409), and not about those it can', () => {
    const bad = 'from courses where level = abc and credits in (1, x) and online = 2 and start_date > true and subject = 5';
    expect(diagnose(bad, context).filter((d) => d.code !== 'RUNS_LOCALLY').map((d) => [d.code, spanText(bad, d), d.severity])).toEqual([
      ['VALUE_TYPE_MISMATCH', 'abc', 'warning'],
      ['VALUE_TYPE_MISMATCH', 'x', 'warning'],
      ['VALUE_TYPE_MISMATCH', '2', 'warning'],
      ['VALUE_TYPE_MISMATCH', 'true', 'warning'],
    ]);
    const good = 'from courses where level = "10" and credits between 1.5 and "2e3" and online in (yes, f, true) and start_date >= "2025-09-01" and start_date < today';
    expect(diagnose(good, { ...context, target: 'ckan-2.12' })).toEqual([]);
  });

  it('says what a target cannot say as a note, never an error, and the sql target says it all', () => {
    const text = 'from courses where level >= 3 and subject != math';
    const notes = diagnose(text, { ...context, target: 'ckan-2.11' });
    expect(notes.map((d) => [d.code, d.severity, spanText(text, d)])).toEqual([
      ['RUNS_LOCALLY', 'information', 'level >= 3'],
      ['RUNS_LOCALLY', 'information', 'subject != math'],
    ]);
    expect(notes[0]!.message).toBe('">=" cannot be sent to a ckan-2.11 portal: ckql fetches the rest of the query\'s records and applies it locally');
    expect(diagnose(text, { ...context, target: 'ckan-2.12' }).map((d) => spanText(text, d))).toEqual(['subject != math']);
    expect(diagnose(text, { ...context, target: 'sql' })).toEqual([]);
    // Without a context a plain query has nothing to say.
    expect(diagnose('from courses where subject = math')).toEqual([]);
  });

  it('binds declared parameters before checking, notes those without a value, and refuses a value of the wrong type', () => {
    const text = 'from $r where subjet = $s limit $n';
    const found = diagnose(text, { ...context, params: { r: 'courses', s: 'math', n: undefined } });
    expect(found.map((d) => [d.code, spanText(text, d), d.severity])).toEqual([
      ['UNKNOWN_FIELD', 'subjet', 'error'],
      ['UNBOUND_PARAMETER', '$n', 'information'],
    ]);
    // A bound value's problem is at its parameter, and a fix there would replace the parameter: none is offered.
    const resource = diagnose('from $r limit 1', { ...context, params: { r: 'corses' } });
    expect(resource).toMatchObject([{ code: 'UNKNOWN_RESOURCE', span: { start: 5, end: 7 }, fixes: [] }]);
    expect(diagnose('from courses limit $n', { params: { n: 'ten' } })).toMatchObject([{ code: 'INVALID_PARAMETER', span: { start: 19, end: 21 } }]);
    // Without declared parameters, none is checked.
    expect(diagnose(text)).toEqual([]);
  });

  it('checks each statement of a script, with spans in the whole text', () => {
    const text = '-- two\nfrom courses where subject = math;\n\nfrom courses where subject = limit;\nfrom courses wher x = 1';
    const found = diagnose(text);
    expect(found.map((d) => spanText(text, d))).toEqual(['limit', 'wher']);
    expect(applied(text, found[1]!)).toContain('from courses where x = 1');
  });
});

describe('diagnose on the sql target', () => {
  it('leaves an unqualified field of a join to the run, which reads the fields and qualifies it', () => {
    const text = 'from courses c join schools s on c.subject = s.code where level > 1 group by c.subject select c.subject, count(*)';
    expect(diagnose(text, { target: 'sql' }).map((d) => d.code)).not.toContain('UNQUALIFIED_FIELD');
  });
});

describe('complete', () => {
  it('offers what the grammar allows, with the names of the context, quoted as the lexer reads them', () => {
    const keywords = complete('from courses wh', 15, context);
    expect(keywords).toMatchObject({ span: { start: 13, end: 15 }, prefix: 'wh', pending: [] });
    expect(keywords.items.map((i) => i.insert)).toEqual(['where']);
    expect(keywords.items[0]!.documentation).toContain('keep the records that match');

    const fields = complete('from courses where s', 20, context).items;
    expect(fields.map((i) => [i.insert, i.detail])).toEqual([
      ['subject', 'text · Subject area'],
      ['start_date', 'date'],
      ['`school year`', 'text'],
    ]);
    expect(fields[0]!.documentation).toBe('Subject area\n\nThe department that teaches it.');
    // Soft keywords are fields where a field stands.
    expect(complete('from courses select la', 22, context).items.map((i) => i.insert)).toEqual(['language']);
    // In a join, `c.` offers the fields of the resource c names, qualified (a quoted name after the dot).
    const joined = 'from schools s join courses c on s.code = c.subject where c.s';
    expect(complete(joined, joined.length, context).items.map((i) => i.insert)).toEqual(['c.subject', 'c.start_date', 'c.`school year`']);

    const values = complete('from courses where subject = ', 29, context).items;
    expect(values.filter((i) => i.kind === 'value').map((i) => i.insert)).toEqual(['"Köln"', '2020', 'math', 'physics']);
    expect(complete('from courses where online = ', 28, context).items.map((i) => i.insert)).toEqual(['true', 'false']);
    // A value that needs quotes completes from its bare start, and keeps the quotes.
    expect(complete('from courses where subject = K', 30, context).items.map((i) => i.insert)).toEqual(['"Köln"']);

    const resources = complete('from c', 6, context).items;
    expect(resources.map((i) => [i.insert, i.detail])).toEqual([['courses', `${courses.id} · 40 records`]]);
    expect(complete('from 4798', 9, context).items.map((i) => i.insert)).toEqual([courses.id]);
  });

  it('keeps the case of a keyword being typed', () => {
    expect(complete('from courses WH', 15).items.map((i) => i.insert)).toEqual(['WHERE']);
  });

  it('lists what the context lacks, so a front end can learn it and complete again', () => {
    expect(complete('from ', 5).pending).toEqual([{ kind: 'resources' }]);
    expect(complete('from places where ', 18, context).pending).toEqual([{ kind: 'fields', resource: 'places' }]);
    expect(complete('from courses where level = ', 27, context).pending).toEqual([{ kind: 'values', resource: 'courses', field: 'level' }]);
    expect(complete('from courses where subject = ', 29, context).pending).toEqual([]);
  });

  it('completes inside a script and in the middle of a text, replacing only the word at the cursor', () => {
    const text = 'from courses limit 1;\nfrom courses wh limit 2';
    const result = complete(text, 37, context);
    expect(result.span).toEqual({ start: 35, end: 37 });
    expect(result.items.map((i) => i.insert)).toEqual(['where']);
    expect(complete('from courses limit 1; ', 22).items.map((i) => i.insert)).toEqual(['from']);
  });

  it('offers the select items’ as names in group by, having and order by, beside the fields', () => {
    const names = (text: string, cursor = text.length) => complete(text, cursor, context).items.filter((i) => i.kind === 'name').map((i) => i.insert);
    const grouped = 'from courses group by subject select subject, count(*) as n, avg(credits) as `mean credits`';
    expect(names(`${grouped} having `)).toEqual(['n', '`mean credits`']);
    expect(names(`${grouped} order by `)).toEqual(['n', '`mean credits`']);
    // the word typed so far filters them, as it does fields; a name that needs quotes completes from its bare start
    expect(complete(`${grouped} having me`, grouped.length + 10, context).items.map((i) => [i.insert, i.kind, i.detail])).toEqual([['`mean credits`', 'name', 'output name (select … as)']]);
    expect(names(`${grouped} order by n desc, `)).toEqual(['n', '`mean credits`']);
    // select may come after the clause being typed: clauses come in any order
    const before = 'from courses group by y having  select level as y, count(*) as n';
    expect(names(before, before.indexOf('having ') + 7)).toEqual(['y', 'n']);
    expect(names(before, 'from courses group by '.length)).toEqual(['y', 'n']);
    // not in where (a name is an output, where reads records) nor in select itself; a resource's alias is no output name
    expect(names(`${grouped} where `)).toEqual([]);
    expect(names('from courses as c select c.subject as s, ')).toEqual([]);
    expect(names('from courses as c join schools as s on c.subject = s.code group by c.subject having ')).toEqual([]);
    // after a qualifier only the resource's fields
    expect(names('from courses c join schools s on c.subject = s.code group by c.subject select c.subject as subj order by c.')).toEqual([]);
  });

  it('offers declared parameters where a value or a resource goes', () => {
    const items = complete('from courses where subject = $', 30, { ...context, params: { subject: 'math' } }).items;
    expect(items.map((i) => [i.insert, i.detail])).toEqual([['$subject', '"math"']]);
  });
});

describe('hover', () => {
  it('gives a field\'s type and dictionary label, a resource\'s summary, a keyword\'s help', () => {
    const text = 'from courses where subject = math order by language nulls first';
    expect(hover(text, 21, context)).toMatchObject({
      kind: 'field',
      span: { start: 19, end: 26 },
      title: 'subject: text',
      type: 'text',
      label: 'Subject area',
      notes: 'The department that teaches it.',
    });
    expect(hover(text, 7, context)).toMatchObject({ kind: 'resource', title: `courses (${courses.id})` });
    expect(hover(text, 7, context)!.text).toContain('40 records; fields: subject, credits');
    expect(hover(text, 15, context)).toMatchObject({ kind: 'keyword', title: 'where' });
    // `language` here is a field; `nulls` and `first` after it are keywords.
    expect(hover(text, 45, context)).toMatchObject({ kind: 'field', title: 'language: text' });
    expect(hover(text, 54, context)).toMatchObject({ kind: 'keyword', title: 'nulls' });
    expect(hover(text, 60, context)).toMatchObject({ kind: 'keyword', title: 'first' });
    expect(hover(text, 30, context)).toBeUndefined();
    expect(hover('from courses where x = $s', 24, { params: { s: 'math' } })).toMatchObject({ kind: 'parameter', text: '$s\ndefault "math"' });
  });

  it('has a help line for every keyword of the lexer', () => {
    for (const token of [...keywordTokens, ...softKeywordTokens]) expect(hasKeywordHelp(token.LABEL!), token.LABEL).toBe(true);
  });
});

describe('format', () => {
  it('formats each statement, keeping comments around statements and leaving one with a comment inside', () => {
    const text = '-- math\nFROM courses LIMIT 5 WHERE subject = "math";\n\n  from x where a=1 -- inside\n  and b = 2;\nfrom y where';
    const result = format(text);
    expect(result.text).toBe('-- math\nfrom courses\nwhere subject = math\nlimit 5;\n\n  from x where a=1 -- inside\n  and b = 2;\nfrom y where');
    expect(result.unchanged.map((u) => u.reason)).toEqual(['comment inside', 'does not parse']);
    expect(format(result.text).text).toBe(result.text);
  });
});

describe('highlight', () => {
  it('classes tokens by the lexer, soft keywords by position, and goes on past a bad character', () => {
    const text = 'from t where language = en and count = 1 search "x" language german order by first nulls first -- note\n! x';
    const classes = highlight(text).map((t) => [text.slice(t.start, t.end), t.class]);
    expect(classes).toEqual([
      ['from', 'keyword'], ['t', 'name'], ['where', 'keyword'], ['language', 'name'], ['=', 'operator'], ['en', 'name'],
      ['and', 'keyword'], ['count', 'name'], ['=', 'operator'], ['1', 'number'], ['search', 'keyword'], ['"x"', 'string'],
      ['language', 'keyword'], ['german', 'name'], ['order', 'keyword'], ['by', 'keyword'], ['first', 'name'],
      ['nulls', 'keyword'], ['first', 'keyword'], ['-- note', 'comment'], ['!', 'invalid'], ['x', 'name'],
    ]);
  });
});
