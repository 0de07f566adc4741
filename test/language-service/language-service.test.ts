/**
 * The language service, function by function, against what the parser,
 * the compiler and the lexer say on their own: exact spans, fixes that make
 * the query parse, names quoted as the lexer reads them back.
 */
import { describe, expect, it } from 'vitest';
import { complete, diagnose, format, highlight, hover, type Diagnostic, type LanguageContext } from '../../src/language-service/index.js';
import { hasKeywordHelp } from '../../src/language-service/keyword-help.js';
import { parse } from '../../src/syntax/parse.js';
import { connect } from '../../src/client/connect.js';
import { withSources } from '../../src/client/sources.js';
import { QueryError } from '../../src/errors.js';
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
    // A source that has no resources at all: the error stands, with no empty list for a hint.
    const none = diagnose('from corses limit 1', { resources: [], allResources: true });
    expect(none.map((d) => [d.code, d.hint])).toEqual([['UNKNOWN_RESOURCE', undefined]]);
    // Without the whole list (a portal lists few), an unknown name is not an error; nor are fields not known yet.
    expect(diagnose('from corses limit 1', { resources: [courses] })).toEqual([]);
    // A resource of another source (`name:resource`) is not this source's to know, when the context knows no sources;
    // the joined resource's fields are checked (courses has no `code` here).
    expect(diagnose('from portal:corses e join courses c on e.code = c.subject limit 1', context)).toEqual([]);
    expect(diagnose('from portal:corses e join courses c on e.code = c.code limit 1', context).map((d) => d.code)).toEqual(['UNKNOWN_FIELD']);
    expect(diagnose('from schools where anything = 1', context)).toEqual([]);
    // `_id` is always a field; `rank` is one with a search.
    expect(diagnose('from courses where _id = 1 order by rank', context).map((d) => d.code)).toEqual(['UNKNOWN_FIELD']);
    expect(diagnose('from courses search "x" order by rank', context)).toEqual([]);
  });

  it('in a join, an unqualified field no joined resource has is unknown, with the nearest qualified field as the fix', () => {
    const text = 'from courses a join courses b on a.subject = b.subject group by a.subject select a.subject, sum(credts) as n order by n';
    const found = diagnose(text, context);
    expect(found.map((d) => [d.code, spanText(text, d), d.severity])).toEqual([['UNKNOWN_FIELD', 'credts', 'error']]);
    expect(found[0]).toMatchObject({ message: 'no joined resource has a field "credts" (a, b)', hint: 'did you mean a.credits?' });
    expect(applied(text, found[0]!)).toBe(text.replace('sum(credts)', 'sum(a.credits)'));
    // A field one side has is not flagged (the run qualifies it), nor an output name (`n`), nor a side whose fields are not known.
    expect(diagnose('from courses a join courses b on a.subject = b.subject select a.subject, credits', context).map((d) => d.code)).not.toContain('UNKNOWN_FIELD');
    expect(diagnose('from courses a join elsewhere b on a.subject = b.subject select nothing_known', context).map((d) => d.code)).not.toContain('UNKNOWN_FIELD');
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
      // then the functions (docs/expressions.md)
      ['substr(', 'substr(s, from [, n])'],
    ]);
    expect(fields[0]!.documentation).toBe('Subject area\n\nThe department that teaches it.');
    // Soft keywords are fields where a field stands.
    expect(complete('from courses select la', 22, context).items.map((i) => i.insert)).toEqual(['language', 'lag(']);
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

describe('functions (docs/expressions.md)', () => {
  it('warns INTEGER_DIVISION where both sides are whole numbers, with a fix that divides as a numeric', () => {
    const warned = (text: string) => diagnose(text, context).filter((d) => d.code === 'INTEGER_DIVISION');
    const share = 'from courses group by subject select subject, count(*) * 100 / 7 as pct';
    const [one, ...rest] = warned(share);
    expect(rest).toEqual([]);
    expect(spanText(share, one!)).toBe('count(*) * 100 / 7');
    expect(one!.severity).toBe('warning');
    expect(applied(share, one!)).toBe('from courses group by subject select subject, count(*) * 100 / 7.0 as pct');
    expect(warned(applied(share, one!))).toEqual([]);
    // an int4 field by an int4 field, in where; a numeric field, a point or a cast divides as a numeric
    expect(warned('from courses where level / level > 0').map((d) => d.code)).toEqual(['INTEGER_DIVISION']);
    for (const fine of ['from courses select credits / 2 as c', 'from courses select level / 2.0 as c', 'from courses select level::numeric / 2 as c', 'from courses select avg(level) / 2 as c']) {
      expect(warned(fine), fine).toEqual([]);
    }
    // a field the context does not know is not guessed at
    expect(warned('from schools select pupils / 2 as c')).toEqual([]);
  });

  it('completes the functions where an expression may call one, with signature and meaning, and not where only a field goes', () => {
    const items = complete('from courses select rou', 23, context).items;
    expect(items.map((i) => [i.label, i.kind, i.insert, i.detail])).toEqual([['round', 'function', 'round(', 'round(x [, n])']]);
    expect(items[0]!.documentation).toContain('half away from zero');
    const where = complete('from courses where date_', 24, context).items.map((i) => i.label);
    expect(where).toEqual(['date_part', 'date_trunc']);
    // a join's keys and a facet's field are fields only
    expect(complete('from courses c join schools s on lo', 35, context).items.filter((i) => i.kind === 'function')).toEqual([]);
    expect(complete('from courses facet lo', 21, context).items.filter((i) => i.kind === 'function')).toEqual([]);
  });

  it('does not flag aggregates of expressions or select * beside other items, and tells an aggregate inside one at its span', () => {
    for (const fine of [
      'from courses group by subject select subject, sum(credits * level) as w, avg(coalesce(level, 0)), max(lower(subject)), count(distinct lower(subject)) having sum(credits * level) > 10 order by w desc',
      'from courses group by lower(subject) select lower(subject) as s, round(avg(credits * 2), 1) as mean',
      'from courses select *, credits * 2 as double',
    ]) {
      expect(diagnose(fine, context), fine).toEqual([]);
      expect(diagnose(fine, { ...context, target: 'ckan-2.12' }).filter((d) => d.severity === 'error'), fine).toEqual([]);
    }
    // inside an aggregate the argument's fields are checked and its divisions warned of, as anywhere
    expect(diagnose('from courses select sum(nope * 2)', context).map((d) => d.code)).toEqual(['UNKNOWN_FIELD']);
    expect(diagnose('from courses select sum(level / 2)', context).map((d) => d.code)).toEqual(['INTEGER_DIVISION']);
    const nested = 'from courses select sum(max(credits) * 2)';
    const [error] = diagnose(nested, context);
    expect([error?.code, spanText(nested, error!)]).toEqual(['AGGREGATE_IN_AGGREGATE', 'max(credits)']);
    // an aggregate's argument completes fields and functions
    expect(complete('from courses select sum(credits * le', 35, context).items.map((i) => i.label)).toContain('level');
  });

  it('hovers a function with its signature and an example, and keeps year(…) the bucket', () => {
    const text = 'from courses select round(avg(credits), 1) as mean, year(start) as y group by y';
    expect(hover(text, text.indexOf('round') + 2, context)).toMatchObject({ kind: 'function', title: 'round(x [, n])', span: { start: 20, end: 25 } });
    expect(hover(text, text.indexOf('round') + 2, context)?.text).toContain('example: round(avg(grade), 1)');
    expect(hover(text, text.indexOf('year') + 1, context)?.text).toContain("date_part('year', f) is the year as a number");
    // a field called like a function is still a field where no ( follows
    const field = 'from courses where round = 1';
    expect(hover(field, field.indexOf('round') + 1, context)?.kind).not.toBe('function');
  });
});

describe('windows (docs/expressions.md)', () => {
  const labels = (text: string) => complete(text, text.length, context).items.map((i) => i.label);

  it('completes the window functions where a window may stand, with signature and meaning, and not in where', () => {
    const items = complete('from courses select ra', 22, context).items;
    expect(items.map((i) => [i.label, i.kind, i.insert, i.detail])).toEqual([['rank', 'function', 'rank(', 'rank() over (…)']]);
    expect(items[0]!.documentation).toContain('ties share a rank');
    expect(labels('from courses select subject, rank() over () as r qualify de')).toEqual(['dense_rank']);
    expect(labels('from courses select subject order by ro')).toEqual(['round', 'row_number']);
    expect(labels('from courses where ro')).toEqual(['round']);
    expect(labels('from courses group by subject having le')).toEqual(['level', 'length', 'least']);
  });

  it('completes over after a call, then partition by and order by inside it, and the fields of its keys', () => {
    expect(labels('from courses select row_number() ')).toContain('over');
    expect(labels('from courses select count(*) o')).toEqual(['over', 'order by', 'offset']);
    expect(labels('from courses select rank() over (')).toEqual(['partition by', 'order by', ')']);
    expect(labels('from courses select rank() over (partition by ')).toContain('subject');
    expect(labels('from courses select rank() over (partition by subject ')).toEqual(['order by', ')']);
    expect(labels('from courses select rank() over (partition by subject order by cr')).toEqual(['credits']);
    // no window in where: after a call there, over is not offered
    expect(labels('from courses where round(credits) ')).not.toContain('over');
    expect(labels('from courses select subject, rank() over () as r ')).toContain('qualify');
  });

  it('hovers a window function, over, partition and qualify', () => {
    const text = 'from courses select lag(credits, 2) over (partition by subject order by level) as l qualify l > 1';
    expect(hover(text, text.indexOf('lag') + 1, context)).toMatchObject({ kind: 'function', title: 'lag(x [, n]) over (…)' });
    expect(hover(text, text.indexOf('over') + 1, context)).toMatchObject({ kind: 'keyword', title: 'over' });
    expect(hover(text, text.indexOf('partition') + 1, context)?.text).toContain('partition by');
    expect(hover(text, text.indexOf('qualify') + 1, context)?.text).toContain('top 3 per partition');
  });

  it('highlights the words of a window as keywords, and the same words as names elsewhere', () => {
    const text = 'from courses select rank() over (partition by subject) as over qualify over = 1';
    const classes = highlight(text).map((t) => [text.slice(t.start, t.end), t.class]);
    expect(classes.filter(([word]) => word === 'over' || word === 'partition' || word === 'qualify' || word === 'rank')).toEqual([
      ['rank', 'keyword'], ['over', 'keyword'], ['partition', 'keyword'], ['over', 'name'], ['qualify', 'keyword'], ['over', 'name'],
    ]);
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

  it('paints a clause or an aggregate after a name as the keyword the parser reads (group by after the resource, count(*)), and hover helps there', () => {
    const text = 'from courses group by subject select subject, count(*) as n having n > 1';
    // the parser's reading: a group by clause (no alias "group"), and an aggregate
    const parsed = parse(text);
    expect(parsed.from.alias).toBeUndefined();
    expect(parsed.group).toBeDefined();
    expect(parsed.select?.items[1]?.value.kind).toBe('aggregate');
    const classOf = (word: string): string | undefined => highlight(text).find((t) => text.slice(t.start, t.end) === word)?.class;
    expect(['group', 'count', 'having'].map(classOf)).toEqual(['keyword', 'keyword', 'keyword']);
    expect(hover(text, text.indexOf('count') + 2, context)).toMatchObject({ kind: 'keyword', title: 'count' });
    expect(hover(text, text.indexOf('group') + 2, context)).toMatchObject({ kind: 'keyword', title: 'group' });
    expect(highlight('from t facet subject top 5').map((t) => t.class)).toEqual(['keyword', 'name', 'keyword', 'name', 'keyword', 'number']);
  });
});

describe('other sources (`name:resource`, docs/aggregates.md)', () => {
  const portalCourses = { id: 'b7f1c2d4-0000-4000-8000-000000000001', alias: 'courses', fields: [{ id: 'level', type: 'int4' }, { id: 'code', type: 'text' }] };
  const withSourcesContext: LanguageContext = {
    resources: [{ id: 'enrolments', fields: [{ id: 'course', type: 'text' }] }],
    allResources: true,
    source: 'local',
    sources: [
      { name: 'portal', detail: 'https://data.example.org/', resources: [portalCourses, { id: 'portal-only', alias: 'university/courses' }], allResources: true },
      { name: 'archive' },
      { name: 'local', detail: 'local data' },
    ],
  };
  const at = (text: string) => complete(text, text.length, withSourcesContext);
  /** The resource each item inserted names, as the parser reads it back. */
  const parsedResource = (insert: string) => {
    const from = parse(`from ${insert}`).from.resource;
    return from.kind === 'string' ? from.value : undefined;
  };

  it('offers each source\'s name: beside the current source\'s resources after from and join, and nothing to ask for', () => {
    for (const text of ['from ', 'from enrolments e join ']) {
      const result = at(text);
      expect(result.items.map((i) => [i.kind, i.insert])).toEqual([
        ['resource', 'enrolments'],
        ['source', 'portal:'],
        ['source', 'archive:'],
        ['source', 'local:'],
      ]);
      expect(result.items.find((i) => i.insert === 'portal:')!.detail).toBe('https://data.example.org/');
      expect(result.pending).toEqual([]);
    }
    expect(at('from enrolments e join ar').items.map((i) => i.insert)).toEqual(['archive:']);
    // without sources in the context, nothing changes
    expect(complete('from ', 5, { resources: [{ id: 'enrolments' }] }).items.map((i) => i.insert)).toEqual(['enrolments']);
  });

  it('after name: offers that source\'s resources written after it, quoted whole where needed; asks for them when unknown', () => {
    const items = at('from enrolments e join portal:').items;
    expect(items.map((i) => [i.kind, i.insert])).toEqual([
      ['resource', 'portal:courses'],
      ['resource', '"portal:university/courses"'],
      ['resource', `portal:${portalCourses.id}`],
      ['resource', 'portal:portal-only'],
    ]);
    // each reads back as the resource of that source it names
    expect(items.map((i) => parsedResource(i.insert))).toEqual(['portal:courses', 'portal:university/courses', `portal:${portalCourses.id}`, 'portal:portal-only']);
    expect(at('from enrolments e join portal:co').items.map((i) => i.insert)).toEqual(['portal:courses']);
    expect(at('from enrolments e join portal:university').items.map((i) => i.insert)).toEqual(['"portal:university/courses"']);
    // the current source under its own name: its resources
    expect(at('from enrolments e join local:').items.map((i) => i.insert)).toEqual(['local:enrolments']);
    // a source whose resources are not known yet: asked for by name
    const archive = at('from enrolments e join archive:');
    expect(archive.items).toEqual([]);
    expect(archive.pending).toEqual([{ kind: 'resources', source: 'archive' }]);
  });

  it('completes and hovers the fields of a resource of another source through its alias, with types', () => {
    const text = 'from enrolments e join portal:courses c on e.course = c.';
    expect(at(text).items.map((i) => [i.insert, i.detail])).toEqual([['c.level', 'int4'], ['c.code', 'text']]);
    expect(at('from portal:courses where le').items.map((i) => [i.insert, i.detail])).toEqual([['level', 'int4'], ['length(', 'length(s)'], ['least(', 'least(a, b, …)']]);
    // a resource of a source whose resources are unknown: its fields are asked for as written
    expect(at('from enrolments e join archive:grades g on e.course = g.').pending).toEqual([{ kind: 'fields', resource: 'archive:grades' }]);
    const query = 'from enrolments e join portal:courses c on e.course = c.code where c.level = 1';
    expect(hover(query, query.indexOf('c.level') + 3, withSourcesContext)).toMatchObject({ kind: 'field', title: 'level: int4', type: 'int4' });
    expect(hover(query, query.indexOf('e.course') + 3, withSourcesContext)).toMatchObject({ kind: 'field', title: 'course: text' });
    const resource = hover(query, query.indexOf('portal:') + 2, withSourcesContext)!;
    expect(resource).toMatchObject({ kind: 'resource', title: `portal:courses (${portalCourses.id})`, span: { start: 23, end: 37 } });
    expect(resource.text).toContain('a resource of the source portal');
    expect(resource.text).toContain('fields: level, code');
  });

  it('diagnoses a name that is no source as the run does (UNKNOWN_SOURCE at name:, the sources in the hint), and an unknown resource of a listed source', async () => {
    const text = 'from enrolments e join portla:courses c on e.course = c.code';
    const [found] = diagnose(text, withSourcesContext);
    expect(found).toMatchObject({ code: 'UNKNOWN_SOURCE', severity: 'error' });
    expect(spanText(text, found!)).toBe('portla:');
    expect(applied(text, found!)).toBe('from enrolments e join portal:courses c on e.course = c.code');
    // the same error, span and hint as a client that knows these sources gives when the query runs
    const nowhere = connect({ url: 'http://127.0.0.1:9' });
    const client = withSources(nowhere, { portal: nowhere, archive: nowhere, local: nowhere }, { name: 'local' });
    const thrown = (await client.search(text).catch((error: unknown) => error)) as QueryError;
    expect(thrown).toBeInstanceOf(QueryError);
    expect([found!.code, found!.span, found!.hint]).toEqual([thrown.code, thrown.span, thrown.hint]);
    expect(found!.hint).toContain('the sources: portal, archive, local');

    const misspelt = 'from enrolments e join portal:cuorses c on e.course = c.code';
    const unknown = diagnose(misspelt, withSourcesContext);
    expect(unknown.map((d) => [d.code, spanText(misspelt, d), d.hint])).toEqual([['UNKNOWN_RESOURCE', 'portal:cuorses', 'did you mean "portal:courses"?']]);
    expect(applied(misspelt, unknown[0]!)).toBe('from enrolments e join portal:courses c on e.course = c.code');
    // the fields of each joined resource, through its alias; the fix keeps the alias
    const fields = 'from enrolments e join portal:courses c on e.cours = c.cod where c.level = 1';
    const wrong = diagnose(fields, withSourcesContext);
    expect(wrong.map((d) => [d.code, spanText(fields, d), d.hint])).toEqual([
      ['UNKNOWN_FIELD', 'e.cours', 'did you mean "course"?'],
      ['UNKNOWN_FIELD', 'c.cod', 'did you mean "code"?'],
    ]);
    expect(applied(applied(fields, wrong[1]!), wrong[0]!)).toBe('from enrolments e join portal:courses c on e.course = c.code where c.level = 1');
    expect(parse(applied(fields, wrong[1]!))).toBeDefined();
    // the fields of a resource of another source, in from
    expect(diagnose('from portal:courses where levl = 1', withSourcesContext).map((d) => [d.code, d.hint])).toEqual([['UNKNOWN_FIELD', 'did you mean "level"?']]);
    // what the context does not know is not an error: a source whose resources are unknown, or no sources at all
    expect(diagnose('from enrolments e join archive:grades g on e.course = g.code', withSourcesContext)).toEqual([]);
    expect(diagnose(text, { resources: withSourcesContext.resources!, allResources: true })).toEqual([]);
  });

  it('a resource whose own name has word: in front (CKAN takes ":" in an alias): the hint says to write it after its source\'s name, which reads it', () => {
    const context: LanguageContext = { ...withSourcesContext, resources: [{ id: 'enrolments' }, { id: 'f00d0000-0000-4000-8000-000000000002', alias: 'stats:2024', fields: [{ id: 'n', type: 'int4' }] }] };
    const [found] = diagnose('from stats:2024 where n > 1', context);
    expect(found!.code).toBe('UNKNOWN_SOURCE');
    expect(found!.hint).toContain('written after that source\'s name (local:stats:2024) or by its id');
    // written so, it is that resource: no diagnostic, its fields complete
    expect(diagnose('from local:stats:2024 where n = 1', context)).toEqual([]);
    expect(complete('from local:stats:2024 where ', 28, context).items.map((i) => i.insert)).toContain('n');
    // a session with no name of its own: by its id only
    const [unnamed] = diagnose('from stats:2024', { ...context, source: undefined, sources: [{ name: 'portal' }] });
    expect(unnamed!.hint).toBe('the sources: portal; a resource written without "name:" is the current source\'s, and one whose own name has ":" is written by its id');
  });
});
