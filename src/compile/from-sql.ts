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
 *   `language`;
 * - a query that computes (`sql-shaped.ts`'s form, every field `"q"."f"`)
 *   comes back with every select item named (`as`), casts as `::` (`int`
 *   as `int4`), `extract` as `date_part`, and a `group by` or `order by` of
 *   an output name as the expression it names: it writes the same SQL.
 *   A join or `select distinct` of that form is refused.
 */
import type {
  Aggregate, AggregateFunction, BucketFunction, CastType, Condition, Expression, Field, FieldSearch, From, FunctionName, Literal, Operand, Query, Search, Select, SelectItem,
  SortKey, StringValue,
} from '../ast.js';
import { plainSelect } from '../ast.js';
import { QueryError, queryError } from '../errors.js';
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

const SYMBOLS = ['@@', '<>', '<=', '>=', '::', '||', '=', '<', '>', '(', ')', ',', '*', '.', '+', '-', '/', '%', '[', ']'] as const;

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
    // A number (`2`, `0.25`), and a negative one as the expression writer writes it, in parentheses: `(-3)` (negation is `(- x)`).
    const previous = tokens.at(-1);
    const negative = c === '-' && previous?.kind === 'symbol' && previous.text === '(' ? /^-\d+(?:\.\d+)?/u.exec(sql.slice(i)) : null;
    const digits = negative ?? /^\d+(?:\.\d+)?/u.exec(sql.slice(i));
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
  /** the shaped form's qualifier of every field (`"q"."f"`); undefined in the plain form */
  #qualifier: string | undefined;

  constructor(sql: string) {
    this.#sql = sql;
    this.#tokens = tokenize(sql);
  }

  statement(): Query {
    this.#word('SELECT');
    if (this.#isShapedForm()) return this.#shapedForm();
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

  /** `… FROM "r" AS "q" …`: the form `sql-shaped.ts` writes for expressions and groups, every field qualified by `"q"`. */
  #isShapedForm(): boolean {
    let depth = 0;
    for (let k = this.#at; k < this.#tokens.length; k++) {
      const t = this.#tokens[k]!;
      if (t.kind === 'symbol' && t.text === '(') depth++;
      if (t.kind === 'symbol' && t.text === ')') depth--;
      if (depth === 0 && t.kind === 'word' && t.text === 'FROM') {
        const qualifier = this.#tokens[k + 3];
        if (this.#tokens[k + 1]?.kind !== 'identifier' || this.#tokens[k + 2]?.text !== 'AS' || qualifier?.kind !== 'identifier') return false;
        // every field before FROM is qualified by it
        this.#qualifier = qualifier.text;
        return true;
      }
    }
    return false;
  }

  /**
   * `SELECT e AS "name", …, count(*) OVER () AS "_ckql_total" FROM "r" AS "q"
   * [WHERE c] [GROUP BY e, …] [HAVING c] [ORDER BY …] LIMIT n [OFFSET m]`:
   * one resource (a join is not read back yet), its fields as `"q"."f"`.
   */
  #shapedForm(): Query {
    const items: { value: Expression; name: string }[] = [];
    while (!(this.#isWord('COUNT') && this.#tokens[this.#at + 4]?.text === 'OVER')) {
      const value = this.#expression();
      this.#word('AS');
      items.push({ value, name: this.#identifier('the column name') });
      this.#symbol(',');
    }
    this.#totalColumn();
    this.#word('FROM');
    const resource = this.#identifier('the resource id as a quoted name');
    this.#word('AS');
    this.#identifier('the quoted name of the resource or its alias');
    const qualifier = this.#qualifier!;
    const { where, search } = this.#whereClause();
    let keys: Expression[] = [];
    if (this.#isWord('GROUP')) {
      this.#at++;
      this.#word('BY');
      keys = [this.#expression()];
      while (this.#isSymbol(',')) {
        this.#at++;
        keys.push(this.#expression());
      }
    }
    let having: Condition<Operand> | undefined;
    if (this.#isWord('HAVING')) {
      this.#at++;
      having = this.#term() as Condition<Operand>;
    }
    const order: SortKey[] = [];
    const ties: { text: string; span: Span }[] = [];
    if (this.#isWord('ORDER')) {
      this.#at++;
      this.#word('BY');
      for (;;) {
        const start = this.#peek().span.start;
        const value = this.#expression();
        const end = this.#tokens[this.#at - 1]!.span.end;
        const { direction, nulls, written } = this.#direction();
        if (written) {
          if (ties.length > 0) throw unreadable(this.#sql, { start, end }, 'the keys of the groups last in the order', this.#sql.slice(start, end));
          order.push({ kind: 'sort-key', span: NO_SPAN, field: value, direction, ...(nulls === undefined ? {} : { nulls }) });
        } else ties.push({ text: this.#sql.slice(start, end), span: { start, end } });
        if (!this.#isSymbol(',')) break;
        this.#at++;
      }
    }
    // The order ends with what breaks ties: `"q"."_id"`, or a grouped query's keys.
    const grouped = keys.length > 0 || having !== undefined || items.some((item) => hasAggregate(item.value));
    const wanted = grouped ? this.#groupKeyTexts() : [`"${qualifier.replaceAll('"', '""')}"."_id"`];
    if (ties.length !== wanted.length || ties.some((t, k) => t.text.replace(/\s+/gu, ' ') !== wanted[k])) {
      const at = ties[0]?.span ?? this.#peek().span;
      throw unreadable(this.#sql, at, `the order to end with ${wanted.join(', ') || 'nothing'} (what breaks ties)`, ties.map((t) => t.text).join(', ') || this.#found(this.#peek()));
    }
    const page = this.#page();
    this.#end();
    const from: From = { kind: 'from', span: NO_SPAN, resource: text(resource), ...(qualifier === resource ? {} : { alias: { kind: 'name', span: NO_SPAN, name: qualifier } }) };
    const select: Select = {
      kind: 'select',
      span: NO_SPAN,
      items: items.map(({ value, name }): SelectItem => ({ kind: 'select-item', span: NO_SPAN, value, ...(isNamed(value, name) ? {} : { as: { kind: 'name', span: NO_SPAN, name } }) })),
    };
    const result: { -readonly [K in keyof Query]: Query[K] } = { kind: 'query', span: NO_SPAN, from, select };
    if (where !== undefined) result.where = { kind: 'where', span: NO_SPAN, condition: where };
    if (search !== undefined) result.search = search;
    if (keys.length > 0) result.group = { kind: 'group', span: NO_SPAN, keys };
    if (having !== undefined) result.having = { kind: 'having', span: NO_SPAN, condition: having };
    if (order.length > 0) result.order = { kind: 'order', span: NO_SPAN, keys: order };
    result.limit = { kind: 'limit', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: page.limit } };
    if (page.offset !== undefined && page.offset > 0) result.offset = { kind: 'offset', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: page.offset } };
    return result;
  }

  /** The group keys' SQL texts, as GROUP BY wrote them (white space as one space). */
  #groupKeyTexts(): string[] {
    const from = this.#tokens.findIndex((t) => t.kind === 'word' && t.text === 'GROUP');
    if (from < 0) return [];
    const texts: string[] = [];
    let depth = 0;
    let start = this.#tokens[from + 2]!.span.start;
    for (let k = from + 2; k < this.#tokens.length; k++) {
      const t = this.#tokens[k]!;
      if (t.kind === 'symbol' && (t.text === '(' || t.text === '[')) depth++;
      if (t.kind === 'symbol' && (t.text === ')' || t.text === ']')) depth--;
      const last = depth === 0 && ((t.kind === 'symbol' && t.text === ',') || (t.kind === 'word' && ['HAVING', 'ORDER', 'LIMIT'].includes(t.text)) || t.kind === 'end');
      if (last) {
        texts.push(this.#sql.slice(start, this.#tokens[k - 1]!.span.end).replace(/\s+/gu, ' '));
        if (!(t.kind === 'symbol' && t.text === ',')) break;
        start = this.#tokens[k + 1]!.span.start;
      }
    }
    return texts;
  }

  /** An expression as `sql-expression.ts` writes it: every operation in parentheses, PostgreSQL's precedence otherwise. */
  #expression(): Expression {
    let left = this.#additive();
    while (this.#isSymbol('||')) {
      this.#at++;
      left = { kind: 'binary', span: NO_SPAN, op: '||', left, right: this.#additive() };
    }
    return left;
  }

  #additive(): Expression {
    let left = this.#multiplicative();
    while (this.#isSymbol('+') || this.#isSymbol('-')) {
      const op = this.#peek().text as '+' | '-';
      this.#at++;
      left = { kind: 'binary', span: NO_SPAN, op, left, right: this.#multiplicative() };
    }
    return left;
  }

  #multiplicative(): Expression {
    let left = this.#unary();
    while (this.#isSymbol('*') || this.#isSymbol('/') || this.#isSymbol('%')) {
      const op = this.#peek().text as '*' | '/' | '%';
      this.#at++;
      left = { kind: 'binary', span: NO_SPAN, op, left, right: this.#unary() };
    }
    return left;
  }

  #unary(): Expression {
    if (this.#isSymbol('-')) {
      this.#at++;
      return { kind: 'negate', span: NO_SPAN, operand: this.#unary() };
    }
    let value = this.#primary();
    while (this.#isSymbol('::')) {
      this.#at++;
      const token = this.#peek();
      const type = token.text.toLowerCase();
      if (token.kind !== 'word' || !CAST_TYPES.has(type)) throw unreadable(this.#sql, token.span, `a type: ${[...CAST_TYPES].join(', ')}`, this.#found(token));
      this.#at++;
      value = { kind: 'cast', span: NO_SPAN, operand: value, type: type as CastType, shorthand: true };
    }
    return value;
  }

  #primary(): Expression {
    const token = this.#peek();
    switch (token.kind) {
      case 'number':
        this.#at++;
        return { kind: 'number', span: NO_SPAN, value: Number(token.text), text: token.text };
      case 'string':
        this.#at++;
        return text(token.text);
      case 'identifier':
        return this.#qualifiedField();
      case 'word':
        return this.#wordExpression(token);
      case 'symbol':
        if (token.text === '(') {
          this.#at++;
          const inner = this.#expression();
          this.#symbol(')');
          // `(min(CASE WHEN f IS NOT NULL THEN ARRAY[f] END))[1]`: min or max where the writer did not know the field's type
          if (this.#isSymbol('[')) return this.#arrayExtreme(inner, token.span);
          return inner;
        }
        break;
      default:
        break;
    }
    throw unreadable(this.#sql, token.span, 'an expression: a number, a quoted literal, a field, "(", CASE or a function', this.#found(token));
  }

  #wordExpression(token: Token): Expression {
    switch (token.text) {
      case 'TRUE':
      case 'FALSE':
        this.#at++;
        return { kind: 'boolean', span: NO_SPAN, value: token.text === 'TRUE' };
      case 'NULL':
        this.#at++;
        return { kind: 'null', span: NO_SPAN };
      case 'CASE':
        return this.#case();
    }
    const name = token.text.toLowerCase();
    this.#at++;
    this.#symbol('(');
    if (name === 'count' && this.#isSymbol('*')) {
      this.#at++;
      this.#symbol(')');
      return { kind: 'aggregate', span: NO_SPAN, fn: 'count' };
    }
    if (AGGREGATES.has(name)) {
      const distinct = name === 'count' && this.#isWord('DISTINCT');
      if (distinct) this.#at++;
      if ((name === 'min' || name === 'max') && this.#isWord('CASE')) return this.#extremeCase(name);
      const f = this.#qualifiedField();
      this.#symbol(')');
      return { kind: 'aggregate', span: NO_SPAN, fn: name as AggregateFunction, field: f, ...(distinct ? { distinct: true as const } : {}) };
    }
    if (name === 'date_trunc' && this.#peek().kind === 'string' && this.#tokens[this.#at + 2]?.kind === 'identifier') {
      // `date_trunc('month', "q"."d"::timestamp)`: a bucket (the function writes its argument in parentheses)
      const unit = this.#string('a unit');
      this.#symbol(',');
      const f = this.#qualifiedField();
      this.#symbol('::');
      this.#word('TIMESTAMP');
      this.#symbol(')');
      if (!['year', 'month', 'week', 'day'].includes(unit)) throw unreadable(this.#sql, token.span, "a bucket's unit: year, month, week or day", unit);
      return { kind: 'bucket', span: NO_SPAN, fn: unit as BucketFunction, field: f };
    }
    if (name === 'floor' && this.#bucketAhead()) {
      // `(floor("q"."f"::numeric / w) * w)`: bucket(f, w), its opening parenthesis already read
      const f = this.#qualifiedField();
      this.#symbol('::');
      this.#word('NUMERIC');
      this.#symbol('/');
      const width = this.#peek();
      this.#at++;
      this.#symbol(')');
      this.#symbol('*');
      const again = this.#peek();
      this.#at++;
      if (again.text !== width.text) throw unreadable(this.#sql, again.span, `the width ${width.text} again`, this.#found(again));
      return { kind: 'bucket', span: NO_SPAN, fn: 'bucket', field: f, width: { kind: 'number', span: NO_SPAN, value: Number(width.text) } };
    }
    const fn = name === 'btrim' ? 'trim' : name;
    if (!FUNCTIONS.has(fn)) throw unreadable(this.#sql, token.span, 'a function ckql writes', this.#found(token));
    const args: Expression[] = [];
    if (!this.#isSymbol(')')) {
      args.push(this.#callArgument(fn));
      while (this.#isSymbol(',')) {
        this.#at++;
        args.push(this.#callArgument(fn));
      }
    }
    this.#symbol(')');
    return { kind: 'call', span: NO_SPAN, fn: fn as FunctionName, args };
  }

  /** An argument; of `date_part`/`date_trunc` the date is written `(d)::timestamp`, and of `concat`/`length` a text `('t')::text`. */
  #callArgument(fn: string): Expression {
    const value = this.#expression();
    if (value.kind !== 'cast') return value;
    if ((fn === 'date_part' || fn === 'date_trunc') && value.type === 'timestamp') return value.operand;
    if ((fn === 'concat' || fn === 'length') && value.type === 'text' && value.operand.kind === 'string') return value.operand;
    return value;
  }

  /** After `floor(`: `"q"."f"::numeric / w) * w` follows. */
  #bucketAhead(): boolean {
    const t = (k: number): Token | undefined => this.#tokens[this.#at + k];
    return t(0)?.kind === 'identifier' && t(1)?.text === '.' && t(3)?.text === '::' && t(4)?.text === 'NUMERIC' && t(5)?.text === '/' && t(6)?.kind === 'number' && t(7)?.text === ')' && t(8)?.text === '*';
  }

  /** `min(CASE WHEN f IS NOT NULL THEN ARRAY[f] END)`, whose `[1]` follows the parentheses around it. */
  #extremeCase(fn: string): Expression {
    this.#word('CASE');
    this.#word('WHEN');
    const f = this.#qualifiedField();
    this.#word('IS');
    this.#word('NOT');
    this.#word('NULL');
    this.#word('THEN');
    this.#word('ARRAY');
    this.#symbol('[');
    const again = this.#qualifiedField();
    this.#symbol(']');
    this.#word('END');
    this.#symbol(')');
    if (again.name !== f.name) throw unreadable(this.#sql, this.#peek().span, `the field ${f.name} again`, again.name);
    return { kind: 'aggregate', span: NO_SPAN, fn: fn as AggregateFunction, field: f, [EXTREME]: true } as Aggregate;
  }

  #arrayExtreme(inner: Expression, span: Span): Expression {
    this.#symbol('[');
    const one = this.#peek();
    if (one.text !== '1') throw unreadable(this.#sql, one.span, '1', this.#found(one));
    this.#at++;
    this.#symbol(']');
    if (inner.kind !== 'aggregate' || !(EXTREME in inner)) throw unreadable(this.#sql, span, 'min or max of an array', 'another value');
    return { kind: 'aggregate', span: NO_SPAN, fn: inner.fn, ...(inner.field === undefined ? {} : { field: inner.field }) };
  }

  /** `CASE WHEN c THEN e … [ELSE e] END`, and the CASE forms `sql-expression.ts` writes for coalesce, nullif, greatest and least. */
  #case(): Expression {
    this.#word('CASE');
    const whens: WrittenWhen[] = [];
    while (this.#isWord('WHEN')) {
      this.#at++;
      const c0 = this.#peek().span.start;
      const condition = this.#term() as Condition<Operand>;
      const conditionText = this.#sql.slice(c0, this.#tokens[this.#at - 1]!.span.end);
      this.#word('THEN');
      const r0 = this.#peek().span.start;
      const result = this.#expression();
      whens.push({ condition, result, conditionText, resultText: this.#sql.slice(r0, this.#tokens[this.#at - 1]!.span.end) });
    }
    if (whens.length === 0) throw unreadable(this.#sql, this.#peek().span, 'WHEN', this.#found(this.#peek()));
    let otherwise: Expression | undefined;
    let elseText = '';
    if (this.#isWord('ELSE')) {
      this.#at++;
      const e0 = this.#peek().span.start;
      otherwise = this.#expression();
      elseText = this.#sql.slice(e0, this.#tokens[this.#at - 1]!.span.end);
    }
    this.#word('END');
    return (
      functionOfCase(whens, otherwise, elseText) ?? {
        kind: 'case',
        span: NO_SPAN,
        whens: whens.map((w) => ({ kind: 'when', span: NO_SPAN, condition: w.condition, result: w.result })),
        ...(otherwise === undefined ? {} : { else: otherwise }),
      }
    );
  }

  /** `"q"."f"` in the shaped form, `"f"` in the plain one. */
  #qualifiedField(): Field {
    const name = this.#identifier('a quoted field name');
    if (this.#qualifier === undefined) return field(name);
    const qualifier = this.#tokens[this.#at - 1]!;
    this.#symbol('.');
    if (name !== this.#qualifier) throw unreadable(this.#sql, qualifier.span, `the qualifier "${this.#qualifier}"`, this.#found(qualifier));
    return field(this.#identifier('a quoted field name after the qualifier'));
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
    const ahead = (k: number): Token | undefined => this.#tokens[this.#at + k];
    if (start.kind === 'identifier' && start.text === '_full_text' && ahead(1)?.text === '@@') {
      this.#at++;
    } else if (this.#qualifier !== undefined && start.kind === 'identifier' && ahead(1)?.text === '.' && ahead(2)?.text === '_full_text' && ahead(3)?.text === '@@') {
      // the shaped form's `"q"."_full_text"`
      this.#qualifiedField();
    } else if (start.kind === 'word' && start.text === 'TO_TSVECTOR') {
      this.#at++;
      this.#symbol('(');
      language = this.#string('the text search language');
      this.#symbol(',');
      this.#word('CAST');
      this.#symbol('(');
      name = this.#qualifiedField().name;
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
    if (this.#qualifier !== undefined && !(token.kind === 'word' && ['NOT', 'NULL', 'FALSE', 'TRUE'].includes(token.text))) return this.#shapedTerm();
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

  /**
   * A term of the shaped form: a group in parentheses, or a test of an
   * expression. A field or aggregate compared with a quoted literal is the
   * filter it always was (`Equals`, `Compare`); compared with an expression,
   * a comparison of expressions.
   */
  #shapedTerm(): Condition {
    if (this.#isSymbol('(')) {
      const saved = this.#at;
      try {
        return this.#group();
      } catch (error) {
        // not a group of conditions: an expression in parentheses, compared
        if (!(error instanceof QueryError)) throw error;
        this.#at = saved;
      }
    }
    const left = this.#expression();
    const token = this.#peek();
    if (token.kind === 'symbol' && token.text in OPERATORS) {
      const op = OPERATORS[token.text as keyof typeof OPERATORS];
      if ((left.kind === 'field' || left.kind === 'aggregate') && this.#tokens[this.#at + 1]?.kind === 'string') {
        this.#at++;
        const value = this.#literal();
        return (op === 'eq' ? { kind: 'eq', span: NO_SPAN, field: left, value } : { kind: 'compare', span: NO_SPAN, op, field: left, value }) as Condition;
      }
      this.#at++;
      return { kind: 'comparison', span: NO_SPAN, op, left, right: this.#expression() };
    }
    // IS [NOT] NULL tests any value (coalesce's CASE writes it of expressions); the other tests, a field
    if (left.kind !== 'field' && !this.#isWord('IS')) throw unreadable(this.#sql, token.span, 'a comparison: = <> < <= > >=', this.#found(token));
    return this.#test(left as Field);
  }

  /** A test on a field: `IS [NOT] NULL`, a comparison, `IN (…)`, `BETWEEN … AND …`, `[I]LIKE '…'`. */
  #test(read?: Field): Condition {
    const subject = read ?? field(this.#identifier('a quoted field name'));
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
      const { direction, nulls, written } = this.#direction();
      keys.push({
        key: { kind: 'sort-key', span: NO_SPAN, field: subject, direction, ...(nulls === undefined ? {} : { nulls }) },
        field: subject,
        written,
      });
      if (!this.#isSymbol(',')) return keys;
      this.#at++;
    }
  }

  /** A sort key's `[ASC|DESC] [NULLS FIRST|LAST]`; `written` says whether either was written. */
  #direction(): { direction: 'asc' | 'desc'; nulls: 'first' | 'last' | undefined; written: boolean } {
    const named = this.#isWord('ASC') || this.#isWord('DESC');
    const direction = named && this.#peek().text === 'DESC' ? 'desc' : 'asc';
    if (named) this.#at++;
    let nulls: 'first' | 'last' | undefined;
    if (this.#isWord('NULLS')) {
      this.#at++;
      const which = this.#peek();
      if (!this.#isWord('FIRST') && !this.#isWord('LAST')) throw unreadable(this.#sql, which.span, 'FIRST or LAST', this.#found(which));
      this.#at++;
      nulls = which.text === 'FIRST' ? 'first' : 'last';
    }
    return { direction, nulls, written: named || nulls !== undefined };
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

const CAST_TYPES: ReadonlySet<string> = new Set(['text', 'int', 'int4', 'int8', 'numeric', 'float8', 'bool', 'date', 'timestamp']);
const AGGREGATES: ReadonlySet<string> = new Set(['count', 'sum', 'avg', 'min', 'max']);
const FUNCTIONS: ReadonlySet<string> = new Set(['round', 'abs', 'floor', 'ceil', 'lower', 'upper', 'length', 'trim', 'substr', 'concat', 'date_part', 'date_trunc']);
/** Marks the `min`/`max` of the array form until its `[1]` is read. */
const EXTREME = Symbol('extreme');

/** A `WHEN` as read, and its texts as written (the CASE forms of functions are known by them). */
interface WrittenWhen {
  readonly condition: Condition<Operand>;
  readonly result: Expression;
  readonly conditionText: string;
  readonly resultText: string;
}

/** Whether an expression computes over groups (an aggregate in it). */
function hasAggregate(e: Expression): boolean {
  switch (e.kind) {
    case 'aggregate':
      return true;
    case 'binary':
      return hasAggregate(e.left) || hasAggregate(e.right);
    case 'negate':
    case 'cast':
      return hasAggregate(e.operand);
    case 'call':
      return e.args.some(hasAggregate);
    case 'case':
      return e.whens.some((w) => hasAggregate(w.result)) || (e.else !== undefined && hasAggregate(e.else));
    default:
      return false;
  }
}

/** Whether a column's name is the one the query gives the value without `as` (a field keeps its name). */
function isNamed(value: Expression, name: string): boolean {
  return value.kind === 'field' && value.name === name;
}

/**
 * The function a CASE stands for, as `sql-expression.ts` writes it:
 * `coalesce(a, b)` as `CASE WHEN a IS NOT NULL THEN a ELSE b END`,
 * `nullif(a, b)` as `CASE WHEN a = b THEN NULL ELSE a END`, and
 * `greatest`/`least` of two as `CASE WHEN a IS NULL THEN b WHEN b IS NULL
 * THEN a WHEN a >= b THEN a ELSE b END` (`<=`; more arguments nest in `a`).
 * The parts are compared as written, so only these shapes read so.
 */
function functionOfCase(whens: readonly WrittenWhen[], otherwise: Expression | undefined, elseText: string): Expression | undefined {
  if (otherwise === undefined) return undefined;
  const call = (fn: FunctionName, args: Expression[]): Expression => ({ kind: 'call', span: NO_SPAN, fn, args });
  if (whens.every((w) => w.conditionText === `${w.resultText} IS NOT NULL`)) return call('coalesce', [...whens.map((w) => w.result), otherwise]);
  const [first, second, third] = whens;
  if (whens.length === 1 && first!.result.kind === 'null' && first!.condition.kind === 'comparison' && first!.condition.op === 'eq' && first!.conditionText.startsWith(`${elseText} = `)) {
    return call('nullif', [first!.condition.left, first!.condition.right]);
  }
  if (whens.length === 3) {
    const a = second!.resultText;
    const b = first!.resultText;
    const extreme = third!.conditionText === `${a} >= ${b}` ? 'greatest' : third!.conditionText === `${a} <= ${b}` ? 'least' : undefined;
    if (extreme !== undefined && first!.conditionText === `${a} IS NULL` && second!.conditionText === `${b} IS NULL` && third!.resultText === a && elseText === b) {
      const left = second!.result;
      const args = left.kind === 'call' && left.fn === extreme ? [...left.args] : [left];
      return call(extreme, [...args, first!.result]);
    }
  }
  return undefined;
}
