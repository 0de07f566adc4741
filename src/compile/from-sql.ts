/**
 * The way back from the `sql` target: a `SELECT` that `sqlRequest` wrote
 * (docs/beyond-the-request.md, Targets) → the query it stands for. It reads
 * exactly the shapes `sql.ts` writes, keywords in any case and white space
 * free, and refuses anything else with `UNREADABLE_SQL`, pointing into the
 * SQL text: it is not a SQL parser, and a statement it did not write may mean
 * something a query cannot say.
 *
 * What the SQL text cannot keep comes back normalized:
 * - every literal is untyped text in SQL; text that is the canonical text
 *   of a number or of `true`/`false` comes back as that number or boolean
 *   (`'2020'` → `2020`, `'2.5'` → `2.5`), the rest as text (`'007'` →
 *   `"007"`). Both read alike (canonical-text equality; a comparison reads
 *   the value as the field's type), except that a field of whole numbers
 *   refuses the text `"2.5"` where it compares the number `2.5`;
 * - `f = null` comes back as `f is null`, `f != null` as `f is not null`,
 *   `f in (null, a)` as `f in (a, null)`, a comparison with null as
 *   `_id < null` (unknown for every record);
 * - the limit is always written, so a query without one comes back with
 *   `limit 100`; the `english` text search configuration comes back as no
 *   `language`.
 */
import type { Condition, Field, FieldSearch, Literal, Query, Search, SortKey, StringValue } from '../ast.js';
import { plainSelect } from '../ast.js';
import { queryError } from '../errors.js';
import type { Span } from '../span.js';
import { hasPrefixWord, searchWords } from './search-text.js';
import { TOTAL_COLUMN } from './sql.js';
import { unescapeColons } from '../datastore/sql-text.js';

const NO_SPAN: Span = Object.freeze({ start: 0, end: 0 });

/** The text search configuration `sqlRequest` writes when a query names none. */
const DEFAULT_LANGUAGE = 'english';
/** The largest LIMIT `sqlRequest` writes (CKAN's `ckan.datastore.search.rows_max`). */
const MAX_LIMIT = 32_000;
/** The alias of the inner SELECT DISTINCT. */
const DISTINCT_ALIAS = '_ckql';

/**
 * Reads the `SELECT` that the `sql` target wrote for a query back into that
 * query, so that `compile(fromSql(s), { target: 'sql' })` gives the same
 * records as `s` (and usually `s` itself; see the module's notes on what
 * comes back normalized). Every node has the span `{ start: 0, end: 0 }`.
 *
 * Throws `QueryError` `UNREADABLE_SQL` (its span in the SQL text, which it
 * carries as `source`) for SQL that ckql did not write.
 *
 * @example
 * const { sql } = compile('from courses where year >= 2020 and stage != retired limit 5', { target: 'sql' });
 * // SELECT *, count(*) OVER () AS "_ckql_total" FROM "courses"
 * //   WHERE ("year" >= '2020' AND "stage" <> 'retired') ORDER BY "_id" LIMIT 5
 * format(fromSql(sql));
 * // from courses
 * // where year >= 2020 and stage != retired
 * // limit 5
 */
export function fromSql(sql: string): Query {
  return new SqlReader(sql).statement();
}

type TokenKind = 'word' | 'identifier' | 'string' | 'number' | 'symbol' | 'end';

interface Token {
  readonly kind: TokenKind;
  /** the word in upper case, the identifier or string unquoted, the digits, the symbol */
  readonly text: string;
  readonly span: Span;
}

const SYMBOLS = ['@@', '<>', '<=', '>=', '=', '<', '>', '(', ')', ',', '*'] as const;

/** Splits SQL into the tokens `sqlRequest` writes; any other character is refused where it stands. */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '"' || c === "'") {
      // `""` inside an identifier and `''` inside a literal stand for one quote.
      let text = '';
      i++;
      for (;;) {
        if (i >= sql.length) throw unreadable(sql, { start, end: sql.length }, c === '"' ? 'a closing " after the name' : "a closing ' after the text", 'the end of the text');
        if (sql[i] === c) {
          if (sql[i + 1] === c) {
            text += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += sql[i];
        i++;
      }
      // `\:` is how sql.ts writes `:` (SQLAlchemy reads it so: datastore/sql-text.ts)
      tokens.push({ kind: c === '"' ? 'identifier' : 'string', text: unescapeColons(text), span: { start, end: i } });
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/u.exec(sql.slice(i));
    if (word !== null) {
      i += word[0].length;
      tokens.push({ kind: 'word', text: word[0].toUpperCase(), span: { start, end: i } });
      continue;
    }
    const digits = /^\d+/u.exec(sql.slice(i));
    if (digits !== null) {
      i += digits[0].length;
      tokens.push({ kind: 'number', text: digits[0], span: { start, end: i } });
      continue;
    }
    const symbol = SYMBOLS.find((s) => sql.startsWith(s, i));
    if (symbol === undefined) throw unreadable(sql, { start, end: start + 1 }, 'a name, a literal, a keyword or one of = <> < <= > >= ( ) , *', JSON.stringify(c));
    i += symbol.length;
    tokens.push({ kind: 'symbol', text: symbol, span: { start, end: i } });
  }
  tokens.push({ kind: 'end', text: '', span: { start: sql.length, end: sql.length } });
  return tokens;
}

function unreadable(sql: string, span: Span, expected: string, found: string) {
  return queryError('UNREADABLE_SQL', span, [expected, found], {
    expected: [expected],
    found,
    hint: 'ckql reads back only the SELECT its sql target writes (ckql compile --target sql); write other SQL as a ckql query',
    source: sql,
  });
}

/** The tokens and a cursor; one method per part of the statement, in the order `sqlRequest` writes them. */
class SqlReader {
  readonly #sql: string;
  readonly #tokens: Token[];
  #at = 0;

  constructor(sql: string) {
    this.#sql = sql;
    this.#tokens = tokenize(sql);
  }

  statement(): Query {
    this.#word('SELECT');
    if (this.#peek().kind === 'symbol' && this.#peek().text === '*' && this.#isDistinctForm()) return this.#distinctForm();
    const fields = this.#columns();
    this.#symbol(',');
    this.#totalColumn();
    this.#word('FROM');
    const resource = this.#identifier('the resource id as a quoted name');
    const { where, search } = this.#whereClause();
    this.#word('ORDER');
    this.#word('BY');
    const keys = this.#sortKeys();
    // `sqlRequest` ends every order with `"_id"`, the language's order among equal keys.
    const last = keys.at(-1);
    if (last === undefined || last.field.name !== '_id' || last.written) {
      throw unreadable(this.#sql, this.#peek().span, 'the order to end with "_id" (ckql breaks ties by _id)', this.#found(this.#peek()));
    }
    const order = keys.slice(0, -1).map((k) => k.key);
    const page = this.#page();
    this.#end();
    return query(resource, { where, search, fields, order, ...page });
  }

  /** `SELECT *, count(*) OVER () … FROM (SELECT DISTINCT …)`: the outer FROM opens a parenthesis. */
  #isDistinctForm(): boolean {
    let depth = 0;
    for (let k = this.#at; k < this.#tokens.length; k++) {
      const t = this.#tokens[k]!;
      if (t.kind === 'symbol' && t.text === '(') depth++;
      if (t.kind === 'symbol' && t.text === ')') depth--;
      if (depth === 0 && t.kind === 'word' && t.text === 'FROM') {
        const next = this.#tokens[k + 1];
        return next?.kind === 'symbol' && next.text === '(';
      }
    }
    return false;
  }

  #distinctForm(): Query {
    this.#symbol('*');
    this.#symbol(',');
    this.#totalColumn();
    this.#word('FROM');
    this.#symbol('(');
    this.#word('SELECT');
    this.#word('DISTINCT');
    const fields = this.#columns();
    if (fields === undefined) throw unreadable(this.#sql, this.#tokens[this.#at - 1]!.span, 'the fields of select distinct', '*');
    this.#word('FROM');
    const resource = this.#identifier('the resource id as a quoted name');
    const { where, search } = this.#whereClause();
    this.#symbol(')');
    this.#word('AS');
    const alias = this.#peek();
    const name = this.#identifier(`"${DISTINCT_ALIAS}"`);
    if (name !== DISTINCT_ALIAS) throw unreadable(this.#sql, alias.span, `"${DISTINCT_ALIAS}"`, this.#found(alias));
    let order: SortKey[] = [];
    if (this.#isWord('ORDER')) {
      this.#word('ORDER');
      this.#word('BY');
      order = this.#sortKeys().map((k) => k.key);
    }
    const page = this.#page();
    this.#end();
    return query(resource, { where, search, fields, distinct: true, order, ...page });
  }

  /** `*` (every field: undefined) or quoted names. */
  #columns(): Field[] | undefined {
    if (this.#isSymbol('*')) {
      this.#at++;
      return undefined;
    }
    const fields = [field(this.#identifier('a quoted field name or *'))];
    while (this.#isSymbol(',') && this.#tokens[this.#at + 1]?.kind === 'identifier') {
      this.#at++;
      fields.push(field(this.#identifier('a quoted field name')));
    }
    return fields;
  }

  /** `count(*) OVER () AS "_ckql_total"`. */
  #totalColumn(): void {
    this.#word('COUNT');
    this.#symbol('(');
    this.#symbol('*');
    this.#symbol(')');
    this.#word('OVER');
    this.#symbol('(');
    this.#symbol(')');
    this.#word('AS');
    const token = this.#peek();
    if (this.#identifier(`"${TOTAL_COLUMN}"`) !== TOTAL_COLUMN) throw unreadable(this.#sql, token.span, `"${TOTAL_COLUMN}"`, this.#found(token));
  }

  /**
   * `WHERE` the query's condition, then its search, joined by `AND`: the
   * condition is one term (`sqlRequest` puts a group in parentheses), every
   * search test is one term.
   */
  #whereClause(): { where?: Condition; search?: Search } {
    if (!this.#isWord('WHERE')) return {};
    this.#at++;
    const conditions: Condition[] = [];
    const tests: SearchTest[] = [];
    for (;;) {
      const test = this.#searchTest();
      if (test !== undefined) tests.push(test);
      else if (tests.length > 0) throw unreadable(this.#sql, this.#peek().span, 'a search test (the condition comes before the search)', this.#found(this.#peek()));
      else conditions.push(this.#term());
      if (!this.#isWord('AND')) break;
      this.#at++;
    }
    const result: { where?: Condition; search?: Search } = {};
    if (conditions.length > 0) result.where = conditions.length === 1 ? conditions[0]! : { kind: 'and', span: NO_SPAN, conditions };
    if (tests.length > 0) result.search = this.#search(tests);
    return result;
  }

  /** One search for the tests: a whole-record search alone, or per-field searches, in one language. */
  #search(tests: readonly SearchTest[]): Search {
    const first = tests[0]!;
    for (const test of tests.slice(1)) {
      if (test.field === undefined || first.field === undefined) {
        throw unreadable(this.#sql, test.span, 'one "_full_text" search, or searches of fields only', 'both');
      }
      if (test.language !== first.language) {
        throw unreadable(this.#sql, test.span, `the language of the first search (${JSON.stringify(first.language)})`, JSON.stringify(test.language));
      }
    }
    const language = first.language === DEFAULT_LANGUAGE ? {} : { language: text(first.language) };
    if (first.field === undefined) return { kind: 'search', span: NO_SPAN, text: text(first.text), ...language };
    const fields = tests.map((t): FieldSearch => ({ kind: 'field-search', span: NO_SPAN, field: field(t.field!), text: text(t.text) }));
    return { kind: 'search', span: NO_SPAN, fields, ...language };
  }

  /**
   * `"_full_text" @@ tsquery` or `to_tsvector('lang', CAST("f" AS text)) @@ tsquery`,
   * tsquery being `plainto_tsquery('lang', 'text')` or `to_tsquery('lang', 'w & p:*')`;
   * undefined (nothing read) when the next term is not a search test.
   */
  #searchTest(): SearchTest | undefined {
    const start = this.#peek();
    let name: string | undefined;
    let language: string | undefined;
    if (start.kind === 'identifier' && start.text === '_full_text' && this.#tokens[this.#at + 1]?.text === '@@') {
      this.#at++;
    } else if (start.kind === 'word' && start.text === 'TO_TSVECTOR') {
      this.#at++;
      this.#symbol('(');
      language = this.#string('the text search language');
      this.#symbol(',');
      this.#word('CAST');
      this.#symbol('(');
      name = this.#identifier('a quoted field name');
      this.#word('AS');
      this.#word('TEXT');
      this.#symbol(')');
      this.#symbol(')');
    } else {
      return undefined;
    }
    this.#symbol('@@');
    const fn = this.#peek();
    if (fn.kind !== 'word' || (fn.text !== 'PLAINTO_TSQUERY' && fn.text !== 'TO_TSQUERY')) {
      throw unreadable(this.#sql, fn.span, 'plainto_tsquery(…) or to_tsquery(…)', this.#found(fn));
    }
    this.#at++;
    this.#symbol('(');
    const queryLanguage = this.#string('the text search language');
    this.#symbol(',');
    const body = this.#peek();
    const written = this.#string('the search text');
    this.#symbol(')');
    language ??= queryLanguage;
    if (queryLanguage !== language) throw unreadable(this.#sql, fn.span, `the field's language (${JSON.stringify(language)})`, JSON.stringify(queryLanguage));
    let searched: string;
    if (fn.text === 'TO_TSQUERY') {
      const words = searchWords(written);
      if (words === undefined) throw unreadable(this.#sql, body.span, 'a to_tsquery text of words joined by & (a word:* is a prefix)', JSON.stringify(written));
      searched = words;
    } else {
      // In the language a word ending in * is a prefix search; plainto_tsquery searches it as written.
      if (hasPrefixWord(written)) throw unreadable(this.#sql, body.span, 'a plainto_tsquery text without a word ending in * (a query searches that word as a prefix)', JSON.stringify(written));
      searched = written;
    }
    return { ...(name === undefined ? {} : { field: name }), language, text: searched, span: { start: start.span.start, end: this.#tokens[this.#at - 1]!.span.end } };
  }

  /** One condition term: a group, `NOT (…)`, `NULL`, `false`, `true`, or a test on a field. */
  #term(): Condition {
    const token = this.#peek();
    if (token.kind === 'symbol' && token.text === '(') return this.#group();
    if (token.kind === 'word') {
      switch (token.text) {
        case 'NOT': {
          this.#at++;
          if (!this.#isSymbol('(')) throw unreadable(this.#sql, this.#peek().span, '"(" after NOT', this.#found(this.#peek()));
          return { kind: 'not', span: NO_SPAN, condition: this.#group() };
        }
        case 'NULL':
          // A comparison with null: unknown for every record.
          this.#at++;
          return { kind: 'compare', span: NO_SPAN, op: 'lt', field: field('_id'), value: { kind: 'null', span: NO_SPAN } };
        case 'FALSE':
          this.#at++;
          return NEVER;
        case 'TRUE':
          // `_id` is never null: this holds for every record.
          this.#at++;
          return { kind: 'not', span: NO_SPAN, condition: { kind: 'is-null', span: NO_SPAN, field: field('_id') } };
      }
    }
    if (token.kind !== 'identifier') throw unreadable(this.#sql, token.span, 'a condition: a quoted field name, "(" or NOT', this.#found(token));
    return this.#test();
  }

  /** `(a AND b …)` or `(a OR b …)`: one connective per group, as the language has it. */
  #group(): Condition {
    this.#symbol('(');
    const conditions = [this.#term()];
    let connective: 'AND' | 'OR' | undefined;
    while (this.#isWord('AND') || this.#isWord('OR')) {
      const token = this.#peek();
      if (connective !== undefined && token.text !== connective) {
        throw unreadable(this.#sql, token.span, `${connective} (a group joins its terms with one of AND, OR)`, token.text);
      }
      connective = token.text as 'AND' | 'OR';
      this.#at++;
      conditions.push(this.#term());
    }
    this.#symbol(')');
    if (conditions.length === 1) return conditions[0]!;
    if (connective === 'AND') return emptyIn(conditions) ?? { kind: 'and', span: NO_SPAN, conditions };
    return nullableIn(conditions) ?? { kind: 'or', span: NO_SPAN, conditions };
  }

  /** A test on a field: `IS [NOT] NULL`, a comparison, `IN (…)`, `BETWEEN … AND …`, `[I]LIKE '…'`. */
  #test(): Condition {
    const subject = field(this.#identifier('a quoted field name'));
    const token = this.#peek();
    if (token.kind === 'symbol' && token.text in OPERATORS) {
      this.#at++;
      const value = this.#literal();
      const op = OPERATORS[token.text as keyof typeof OPERATORS];
      if (value.kind === 'null') throw unreadable(this.#sql, this.#tokens[this.#at - 1]!.span, 'a quoted literal (ckql writes a comparison with null as IS [NOT] NULL or NULL)', 'NULL');
      return op === 'eq' ? { kind: 'eq', span: NO_SPAN, field: subject, value } : { kind: 'compare', span: NO_SPAN, op, field: subject, value };
    }
    switch (token.kind === 'word' ? token.text : '') {
      case 'IS': {
        this.#at++;
        const negated = this.#isWord('NOT');
        if (negated) this.#at++;
        this.#word('NULL');
        const test: Condition = { kind: 'is-null', span: NO_SPAN, field: subject };
        return negated ? { kind: 'not', span: NO_SPAN, condition: test } : test;
      }
      case 'IN': {
        this.#at++;
        this.#symbol('(');
        const values = [this.#literal()];
        while (this.#isSymbol(',')) {
          this.#at++;
          values.push(this.#literal());
        }
        this.#symbol(')');
        return { kind: 'in', span: NO_SPAN, field: subject, values };
      }
      case 'BETWEEN': {
        this.#at++;
        const low = this.#literal();
        this.#word('AND');
        const high = this.#literal();
        return { kind: 'between', span: NO_SPAN, field: subject, low, high };
      }
      case 'LIKE':
      case 'ILIKE': {
        this.#at++;
        const pattern = text(this.#string('the pattern as a quoted literal'));
        return { kind: 'like', span: NO_SPAN, field: subject, pattern, ignoreCase: token.text === 'ILIKE' };
      }
      default:
        throw unreadable(this.#sql, token.span, 'a test after the field: = <> < <= > >= IN BETWEEN LIKE ILIKE IS', this.#found(token));
    }
  }

  /** A quoted literal, read as the value it is the canonical text of; or NULL. */
  #literal(): Literal {
    const token = this.#peek();
    if (token.kind === 'word' && token.text === 'NULL') {
      this.#at++;
      return { kind: 'null', span: NO_SPAN };
    }
    return literalOf(this.#string('a quoted literal'));
  }

  /** `"f" ASC|DESC [NULLS FIRST|LAST]`, …; `written` says whether a direction was written (the tie-breaking `"_id"` has none). */
  #sortKeys(): { key: SortKey; field: Field; written: boolean }[] {
    const keys: { key: SortKey; field: Field; written: boolean }[] = [];
    for (;;) {
      const subject = field(this.#identifier('a quoted field name to order by'));
      const written = this.#isWord('ASC') || this.#isWord('DESC');
      const direction = written && this.#peek().text === 'DESC' ? 'desc' : 'asc';
      if (written) this.#at++;
      let nulls: 'first' | 'last' | undefined;
      if (this.#isWord('NULLS')) {
        this.#at++;
        const which = this.#peek();
        if (!this.#isWord('FIRST') && !this.#isWord('LAST')) throw unreadable(this.#sql, which.span, 'FIRST or LAST', this.#found(which));
        this.#at++;
        nulls = which.text === 'FIRST' ? 'first' : 'last';
      }
      keys.push({
        key: { kind: 'sort-key', span: NO_SPAN, field: subject, direction, ...(nulls === undefined ? {} : { nulls }) },
        field: subject,
        written: written || nulls !== undefined,
      });
      if (!this.#isSymbol(',')) return keys;
      this.#at++;
    }
  }

  /** `LIMIT n [OFFSET m]`: `sqlRequest` always writes the limit, at most 32 000. */
  #page(): { limit: number; offset?: number } {
    this.#word('LIMIT');
    const limit = this.#count();
    if (limit.value > MAX_LIMIT) throw unreadable(this.#sql, limit.span, `a limit of at most ${MAX_LIMIT} (CKAN's rows_max)`, String(limit.value));
    if (!this.#isWord('OFFSET')) return { limit: limit.value };
    this.#at++;
    return { limit: limit.value, offset: this.#count().value };
  }

  #count(): { value: number; span: Span } {
    const token = this.#peek();
    const value = Number(token.text);
    if (token.kind !== 'number' || !Number.isSafeInteger(value)) throw unreadable(this.#sql, token.span, 'a whole number', this.#found(token));
    this.#at++;
    return { value, span: token.span };
  }

  #end(): void {
    const token = this.#peek();
    if (token.kind !== 'end') throw unreadable(this.#sql, token.span, 'the end of the statement', this.#found(token));
  }

  #peek(): Token {
    return this.#tokens[this.#at]!;
  }

  #isWord(word: string): boolean {
    const token = this.#peek();
    return token.kind === 'word' && token.text === word;
  }

  #isSymbol(symbol: string): boolean {
    const token = this.#peek();
    return token.kind === 'symbol' && token.text === symbol;
  }

  #word(word: string): void {
    if (!this.#isWord(word)) throw unreadable(this.#sql, this.#peek().span, word, this.#found(this.#peek()));
    this.#at++;
  }

  #symbol(symbol: string): void {
    if (!this.#isSymbol(symbol)) throw unreadable(this.#sql, this.#peek().span, JSON.stringify(symbol), this.#found(this.#peek()));
    this.#at++;
  }

  #identifier(expected: string): string {
    const token = this.#peek();
    if (token.kind !== 'identifier') throw unreadable(this.#sql, token.span, expected, this.#found(token));
    if (token.text === '') throw unreadable(this.#sql, token.span, 'a field name (the language has no empty one)', '""');
    this.#at++;
    return token.text;
  }

  #string(expected: string): string {
    const token = this.#peek();
    if (token.kind !== 'string') throw unreadable(this.#sql, token.span, expected, this.#found(token));
    this.#at++;
    return token.text;
  }

  /** A token as the error shows it: the SQL as written. */
  #found(token: Token): string {
    return token.kind === 'end' ? 'the end of the text' : this.#sql.slice(token.span.start, token.span.end);
  }
}

interface SearchTest {
  /** absent for `"_full_text"` (the whole record) */
  readonly field?: string;
  readonly language: string;
  /** the search text in the language's words (`alg*` for a prefix) */
  readonly text: string;
  readonly span: Span;
}

const OPERATORS = { '=': 'eq', '<>': 'ne', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const;

/** SQL's `false`, which holds for no record: read as an empty list on `_id`, and known by its identity. */
const NEVER: Condition = Object.freeze({ kind: 'in', span: NO_SPAN, field: Object.freeze(field('_id')), values: Object.freeze([]) as readonly Literal[] });

/** `(false AND "f" IS NULL)`: how `sqlRequest` writes `f in ()` (false, and the field still checked). */
function emptyIn(conditions: readonly Condition[]): Condition | undefined {
  const [never, isNull] = conditions;
  if (conditions.length !== 2 || never !== NEVER || isNull!.kind !== 'is-null') return undefined;
  return { kind: 'in', span: NO_SPAN, field: isNull!.field, values: [] };
}

/** `("f" IS NULL OR "f" IN (…))` and `("f" IS NULL OR false)`: how `sqlRequest` writes an `in` list holding null. */
function nullableIn(conditions: readonly Condition[]): Condition | undefined {
  if (conditions.length !== 2) return undefined;
  const [isNull, rest] = conditions as [Condition, Condition];
  if (isNull.kind !== 'is-null') return undefined;
  const values: Literal[] = [];
  // A list that holds null itself is written with its own IS NULL: that one is read as the list.
  if (rest.kind === 'in' && rest.field.name === isNull.field.name && rest.values.every((v) => v.kind !== 'null')) values.push(...(rest.values as Literal[]));
  else if (rest !== NEVER) return undefined;
  return { kind: 'in', span: NO_SPAN, field: isNull.field, values: [...values, { kind: 'null', span: NO_SPAN }] };
}

/** Text that is the canonical text of a number or boolean is that value (docs/semantics.md: `2020` equals `"2020"`). */
function literalOf(value: string): Literal {
  if (value === 'true' || value === 'false') return { kind: 'boolean', span: NO_SPAN, value: value === 'true' };
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/u.test(value)) {
    const n = Number(value);
    if (Number.isFinite(n) && String(n) === value) return { kind: 'number', span: NO_SPAN, value: n };
  }
  return text(value);
}

function field(name: string): Field {
  return { kind: 'field', span: NO_SPAN, name };
}

function text(value: string): StringValue {
  return { kind: 'string', span: NO_SPAN, value };
}

function query(
  resource: string,
  parts: {
    readonly where?: Condition | undefined;
    readonly search?: Search | undefined;
    readonly fields?: Field[] | undefined;
    readonly distinct?: boolean;
    readonly order: readonly SortKey[];
    readonly limit: number;
    readonly offset?: number;
  },
): Query {
  const result: { -readonly [K in keyof Query]: Query[K] } = {
    kind: 'query',
    span: NO_SPAN,
    from: { kind: 'from', span: NO_SPAN, resource: text(resource) },
  };
  if (parts.where !== undefined) result.where = { kind: 'where', span: NO_SPAN, condition: parts.where };
  if (parts.search !== undefined) result.search = parts.search;
  if (parts.fields !== undefined) {
    result.select = plainSelect(parts.fields, NO_SPAN, parts.distinct === true);
  }
  if (parts.order.length > 0) result.order = { kind: 'order', span: NO_SPAN, keys: parts.order };
  result.limit = { kind: 'limit', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: parts.limit } };
  if (parts.offset !== undefined && parts.offset > 0) result.offset = { kind: 'offset', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: parts.offset } };
  return result;
}
