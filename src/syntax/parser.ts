/**
 * The grammar of ckql. Each rule returns its syntax-tree node, the node
 * Chevrotain's `CstParser` would build (`cst.generated.d.ts`, generated from
 * this grammar, is its type), and `to-ast.ts` gives the tree its meaning.
 * Rule names are spelled the same in `grammar/query.ebnf`, and
 * `npm run grammar` draws them.
 *
 * Why the rules build the tree themselves (an `EmbeddedActionsParser`)
 * rather than letting `CstParser` do it: its tree builder files every token
 * and subrule under its name as it meets it, one keyed store into an object
 * whose keys depend on the text, and pushes and pops a node per rule. That
 * was more than half of parsing (4.3 µs of a query's 8.7 µs on the bench
 * corpus, against 1.9 µs to recognize the same tokens without a tree); an
 * object literal per node, with its keys fixed by the rule, costs a fraction
 * of it. The shape is the same: a key holds the tokens or nodes of that name
 * in the order of the text, and a key with nothing under it is `undefined`
 * (`to-ast.ts` reads absent and undefined alike). A repetition's separator
 * (`Comma`) is consumed by Chevrotain and not kept: nothing reads it.
 *
 * Two places accept more than the language allows, so that the visitor can
 * say precisely what is wrong instead of "unexpected token":
 * - `and` and `or` may follow one another in any mix (MIXED_AND_OR);
 * - clauses may repeat (DUPLICATE_CLAUSE at the second one).
 *
 * While Chevrotain records the grammar (`performSelfAnalysis`), `CONSUME`,
 * `SUBRULE`, `OR` and `OPTION` return placeholders: the rules only put
 * them in arrays and objects, which is harmless then.
 */
import {
  EmbeddedActionsParser, getLookaheadPaths, LLkLookaheadStrategy, tokenMatcher, type IOrAlt, type IToken, type Rule, type TokenType,
} from 'chevrotain';
import type {
  AggregateCstChildren, AggregateCstNode, BucketCstChildren, BucketCstNode, ClauseCstChildren, ClauseCstNode, ComparisonCstChildren,
  ComparisonCstNode, ConditionCstNode, FacetClauseCstNode, FacetItemCstNode, FieldCstChildren, FieldCstNode, FieldSearchCstChildren,
  FieldSearchCstNode, GroupClauseCstNode, GroupCstNode, GroupKeyCstChildren, GroupKeyCstNode, HavingClauseCstNode, JoinClauseCstNode,
  KeyPairCstNode, LimitClauseCstChildren, LimitClauseCstNode, NameCstChildren, NameCstNode, OffsetClauseCstChildren, OffsetClauseCstNode,
  OperandCstChildren, OperandCstNode, OperatorCstChildren, OperatorCstNode, OrderClauseCstNode, QueryCstNode, ResourceCstChildren,
  ResourceCstNode, SearchClauseCstChildren, SearchClauseCstNode, SelectClauseCstNode, SelectItemCstChildren, SelectItemCstNode,
  SortKeyCstChildren, SortKeyCstNode, SourceCstNode, UnitCstChildren, UnitCstNode, ValueCstChildren, ValueCstNode, ValueListCstNode,
  WhereClauseCstNode,
} from './cst.generated.js';
import {
  allTokens, And, As, Asc, Avg, BacktickField, Between, Bucket, By, Comma, Count, DateTime, Day, Desc, Distinct, Equals, Facet,
  False, First, From, Greater, GreaterEquals, Group, Having, Ilike, In, Is, Join, Keyword, Language, Last, Left, Less, LessEquals,
  Like, Limit, LParen, Max, Min, Month, Not, NotEquals, Null, Nulls, NumberLiteral, Offset, On, Or, Order, Parameter,
  Qualifier, RParen, Search, Select, Semicolon, Star, StringLiteral, Sum, Top, True, Uuid, Week, Where, Bareword, Year,
} from './tokens.js';

/**
 * The soft keywords that may follow a resource: an alias written without
 * `as` is none of them (`from t group by x` groups; `from t g where …` names `t` `g`).
 */
export const afterSource: ReadonlySet<TokenType> = new Set([Join, Left, On, Group, Having, Facet]);

/** The alternatives of one `OR`, kept between calls; each gives what it read. */
type Alternatives<T> = IOrAlt<T>[] | undefined;

/** A token that may be absent, as a node's child list. */
function optional(token: IToken | undefined): IToken[] | undefined {
  return token === undefined ? undefined : [token];
}

/** Items collected by a repetition, as a node's child list. */
function some<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

/** `and` or `or`, each under its own name, in the order of the text. */
function connective(token: IToken, ands: IToken[], ors: IToken[]): void {
  (token.tokenType === Or ? ors : ands).push(token);
}

/**
 * Chevrotain's LL(k) lookahead, with a faster choice where an `OR` needs two
 * tokens: which operand (`count(` or the field `count`), which comparison
 * (`not in` or `not like`). Chevrotain's function for those tries every
 * path of every alternative in turn (a plain field was compared with the ten
 * `name (` paths of the aggregates and buckets before its own); this one
 * looks up the paths that start with the next token's type and tries only
 * those, in the same order, so it picks the same alternative. An `OR` with
 * gates, an empty path or one-token paths keeps Chevrotain's function.
 */
class FirstTokenLookahead extends LLkLookaheadStrategy {
  override buildLookaheadForAlternation(options: {
    prodOccurrence: number;
    rule: Rule;
    maxLookahead: number;
    hasPredicates: boolean;
    dynamicTokensEnabled: boolean;
  }): (orAlts?: IOrAlt<unknown>[]) => number | undefined {
    const general = super.buildLookaheadForAlternation(options);
    if (options.hasPredicates || options.dynamicTokensEnabled) return general;
    const alternatives = getLookaheadPaths({
      occurrence: options.prodOccurrence,
      rule: options.rule,
      prodType: 'Alternation',
      maxLookahead: options.maxLookahead,
    });
    const paths = alternatives.flat();
    if (paths.every((path) => path.length === 1) || paths.some((path) => path.length === 0)) return general;
    // by a token type's index: the alternatives with a path it starts, in order, and the rest of each path
    const byFirst: { readonly alternative: number; readonly rest: readonly TokenType[] }[][] = [];
    alternatives.forEach((altPaths, alternative) => {
      for (const path of altPaths) {
        const first = path[0]!;
        // a category (Bareword, Keyword) is started by its members' types too
        for (const index of [first.tokenTypeIdx!, ...((first as { categoryMatches?: number[] }).categoryMatches ?? [])]) {
          (byFirst[index] ??= []).push({ alternative, rest: path.slice(1) });
        }
      }
    });
    return function (this: { LA(howMuch: number): IToken }): number | undefined {
      const candidates = byFirst[this.LA(1).tokenTypeIdx];
      if (candidates === undefined) return undefined;
      next: for (const { alternative, rest } of candidates) {
        for (let i = 0; i < rest.length; i++) if (!tokenMatcher(this.LA(i + 2), rest[i]!)) continue next;
        return alternative;
      }
      return undefined;
    };
  }
}

/** Stands for the operand of a comparison until the rule puts it in (see `comparison`). */
const NO_OPERAND: OperandCstNode[] = [];

export class QueryParser extends EmbeddedActionsParser {
  // Each `OR` reuses the array of alternatives made on its first call
  // (Chevrotain's performance guide): a new array of closures per call costs
  // more than the choice itself, and much more under tsx/vitest, whose
  // keepNames wraps every named closure as it is created. The caches are
  // declared here, before the rules, so the parser's shape is fixed when it
  // is built; what they hold has no per-call state (an alternative returns
  // what it read, and the rule files it).
  private resourceAlternatives: Alternatives<ResourceCstChildren>;
  private itemAlternatives: Alternatives<SelectItemCstChildren>;
  private aggregateAlternatives: Alternatives<AggregateCstChildren>;
  private countAlternatives: Alternatives<AggregateCstChildren>;
  private aggregateNameAlternatives: Alternatives<IToken>;
  private bucketAlternatives: Alternatives<BucketCstChildren>;
  private unitAlternatives: Alternatives<UnitCstChildren>;
  private groupKeyAlternatives: Alternatives<GroupKeyCstChildren>;
  private havingJoinAlternatives: Alternatives<IToken>;
  private facetByAlternatives: Alternatives<UnitCstNode | IToken>;
  private operandAlternatives: Alternatives<OperandCstChildren>;
  private sortOperandAlternatives: Alternatives<SortKeyCstChildren>;
  private nameAlternatives: Alternatives<NameCstChildren>;
  private clauseAlternatives: Alternatives<ClauseCstChildren>;
  private whereJoinAlternatives: Alternatives<IToken>;
  private conditionAlternatives: Alternatives<ConditionCstNode['children']>;
  private comparisonAlternatives: Alternatives<ComparisonCstChildren>;
  private operatorAlternatives: Alternatives<OperatorCstChildren>;
  private likeAlternatives: Alternatives<IToken>;
  private patternAlternatives: Alternatives<IToken>;
  private groupJoinAlternatives: Alternatives<IToken>;
  private searchAlternatives: Alternatives<SearchClauseCstChildren>;
  private searchTextAlternatives: Alternatives<FieldSearchCstChildren>;
  private languageAlternatives: Alternatives<IToken>;
  private directionAlternatives: Alternatives<IToken>;
  private nullsAlternatives: Alternatives<IToken>;
  private limitAlternatives: Alternatives<LimitClauseCstChildren>;
  private offsetAlternatives: Alternatives<OffsetClauseCstChildren>;
  private fieldAlternatives: Alternatives<FieldCstChildren>;
  private valueAlternatives: Alternatives<ValueCstChildren>;

  constructor() {
    // No recovery: `parse` reports the first error and stops, which keeps the
    // error path simple and the happy path free of bookkeeping.
    super(allTokens, { recoveryEnabled: false, lookaheadStrategy: new FirstTokenLookahead() });
    this.performSelfAnalysis();
  }

  /**
   * What an `OR` gave, for the rule to add to; while Chevrotain records the
   * grammar, `OR` gives a frozen placeholder instead, and the rule fills a
   * throwaway object.
   */
  private own<T extends object>(children: T): T {
    return this.RECORDING_PHASE ? ({} as T) : children;
  }

  /** Whether the next token is an alias written without `as` (see `source`). */
  private impliedAlias(): boolean {
    const next = this.LA(1).tokenType;
    return (next === Bareword || (next.CATEGORIES?.includes(Bareword) === true && !afterSource.has(next))) && endsSource(this.LA(2).tokenType);
  }

  /** `from R [as a]`, the joins, then clauses in any order, and one optional `;` (the REPL's terminator). */
  readonly query = this.RULE('query', (): QueryCstNode => {
    const from = this.CONSUME(From);
    const source = this.SUBRULE(this.source);
    const joins: JoinClauseCstNode[] = [];
    this.MANY(() => {
      joins.push(this.SUBRULE(this.joinClause));
    });
    const clauses: ClauseCstNode[] = [];
    this.MANY2(() => {
      clauses.push(this.SUBRULE(this.clause));
    });
    const semicolon = this.OPTION(() => this.CONSUME(Semicolon));
    return {
      name: 'query',
      children: { From: [from], source: [source], joinClause: some(joins), clause: some(clauses), Semicolon: optional(semicolon) },
    };
  });

  /**
   * A resource and its alias. Without `as`, a name is an alias only where a
   * source may end (before a keyword, `join`, `on`, a clause, `;` or the
   * end), so `from courses wher subject = math` is still a typo of `where`.
   */
  readonly source = this.RULE('source', (): SourceCstNode => {
    const resource = this.SUBRULE(this.resource);
    let as: IToken | undefined;
    let alias: IToken | undefined;
    this.OPTION({
      GATE: () => this.LA(1).tokenType === As || this.impliedAlias(),
      DEF: () => {
        as = this.OPTION2(() => this.CONSUME(As));
        alias = this.CONSUME(Bareword);
      },
    });
    return { name: 'source', children: { resource: [resource], As: optional(as), Bareword: optional(alias) } };
  });

  /** `[left] join R [as] a on a.k = b.k and …` */
  readonly joinClause = this.RULE('joinClause', (): JoinClauseCstNode => {
    const left = this.OPTION(() => this.CONSUME(Left));
    const join = this.CONSUME(Join);
    const source = this.SUBRULE(this.source);
    const on = this.CONSUME(On);
    const pairs = [this.SUBRULE(this.keyPair)];
    const ands: IToken[] = [];
    this.MANY(() => {
      ands.push(this.CONSUME(And));
      pairs.push(this.SUBRULE2(this.keyPair));
    });
    return {
      name: 'joinClause',
      children: { Left: optional(left), Join: [join], source: [source], On: [on], keyPair: pairs, And: some(ands) },
    };
  });

  /** `e.course = c.code`: equality joins only. */
  readonly keyPair = this.RULE('keyPair', (): KeyPairCstNode => {
    const left = this.SUBRULE(this.field);
    const equals = this.CONSUME(Equals);
    const right = this.SUBRULE2(this.field);
    return { name: 'keyPair', children: { field: [left, right], Equals: [equals] } };
  });

  readonly resource = this.RULE('resource', (): ResourceCstNode => ({
    name: 'resource',
    children: this.OR((this.resourceAlternatives ??= [
      { ALT: () => ({ Uuid: [this.CONSUME(Uuid)] }) },
      { ALT: () => ({ Bareword: [this.CONSUME(Bareword)] }) },
      { ALT: () => ({ String: [this.CONSUME(StringLiteral)] }) },
      { ALT: () => ({ Parameter: [this.CONSUME(Parameter)] }) },
    ])),
  }));

  readonly clause = this.RULE('clause', (): ClauseCstNode => ({
    name: 'clause',
    children: this.OR((this.clauseAlternatives ??= [
      { ALT: () => ({ whereClause: [this.SUBRULE(this.whereClause)] }) },
      { ALT: () => ({ searchClause: [this.SUBRULE(this.searchClause)] }) },
      { ALT: () => ({ selectClause: [this.SUBRULE(this.selectClause)] }) },
      { ALT: () => ({ groupClause: [this.SUBRULE(this.groupClause)] }) },
      { ALT: () => ({ havingClause: [this.SUBRULE(this.havingClause)] }) },
      { ALT: () => ({ facetClause: [this.SUBRULE(this.facetClause)] }) },
      { ALT: () => ({ orderClause: [this.SUBRULE(this.orderClause)] }) },
      { ALT: () => ({ limitClause: [this.SUBRULE(this.limitClause)] }) },
      { ALT: () => ({ offsetClause: [this.SUBRULE(this.offsetClause)] }) },
    ])),
  }));

  readonly whereClause = this.RULE('whereClause', (): WhereClauseCstNode => {
    const where = this.CONSUME(Where);
    const conditions = [this.SUBRULE(this.condition)];
    const ands: IToken[] = [];
    const ors: IToken[] = [];
    this.MANY(() => {
      connective(
        this.OR((this.whereJoinAlternatives ??= [{ ALT: () => this.CONSUME(And) }, { ALT: () => this.CONSUME(Or) }])),
        ands,
        ors,
      );
      conditions.push(this.SUBRULE2(this.condition));
    });
    return { name: 'whereClause', children: { Where: [where], condition: conditions, And: some(ands), Or: some(ors) } };
  });

  /** `[not] (comparison | group)` */
  readonly condition = this.RULE('condition', (): ConditionCstNode => {
    const not = this.OPTION(() => this.CONSUME(Not));
    const children = this.own(this.OR((this.conditionAlternatives ??= [
      { ALT: () => ({ Not: undefined, comparison: [this.SUBRULE(this.comparison)] }) },
      { ALT: () => ({ Not: undefined, group: [this.SUBRULE(this.group)] }) },
    ])));
    children.Not = optional(not);
    return { name: 'condition', children };
  });

  /**
   * A test of one field: `= != < <= > >=` and a value, `[not] in (…)`,
   * `between v and v`, `[not] like|ilike pattern`, `is [not] null`. The
   * alternatives are kept between calls, so each puts a placeholder where
   * the operand goes and the rule files the operand it read.
   */
  readonly comparison = this.RULE('comparison', (): ComparisonCstNode => {
    const operand = this.SUBRULE(this.operand);
    const children = this.own(this.OR((this.comparisonAlternatives ??= [
      {
        ALT: () => {
          const operator = this.SUBRULE(this.operator);
          const value = this.SUBRULE(this.value);
          return { operand: NO_OPERAND, operator: [operator], value: [value] };
        },
      },
      {
        ALT: () => {
          const not = this.OPTION(() => this.CONSUME(Not));
          const inToken = this.CONSUME(In);
          const list = this.SUBRULE(this.valueList);
          return { operand: NO_OPERAND, Not: optional(not), In: [inToken], valueList: [list] };
        },
      },
      {
        ALT: () => {
          const between = this.CONSUME(Between);
          const low = this.SUBRULE2(this.value);
          const and = this.CONSUME(And);
          const high = this.SUBRULE3(this.value);
          return { operand: NO_OPERAND, Between: [between], value: [low, high], And: [and] };
        },
      },
      {
        ALT: () => {
          const not = this.OPTION2(() => this.CONSUME2(Not));
          const like = this.OR2((this.likeAlternatives ??= [{ ALT: () => this.CONSUME(Like) }, { ALT: () => this.CONSUME(Ilike) }]));
          const pattern = this.OR3((this.patternAlternatives ??= [{ ALT: () => this.CONSUME(StringLiteral) }, { ALT: () => this.CONSUME(Parameter) }]));
          const ilike = like.tokenType === Ilike;
          const parameter = pattern.tokenType === Parameter;
          return {
            operand: NO_OPERAND,
            Not: optional(not),
            Like: ilike ? undefined : [like],
            Ilike: ilike ? [like] : undefined,
            String: parameter ? undefined : [pattern],
            Parameter: parameter ? [pattern] : undefined,
          };
        },
      },
      {
        ALT: () => {
          const is = this.CONSUME(Is);
          const not = this.OPTION3(() => this.CONSUME3(Not));
          const nullToken = this.CONSUME(Null);
          return { operand: NO_OPERAND, Is: [is], Not: optional(not), Null: [nullToken] };
        },
      },
    ])));
    children.operand = [operand];
    return { name: 'comparison', children };
  });

  readonly operator = this.RULE('operator', (): OperatorCstNode => ({
    name: 'operator',
    children: this.OR((this.operatorAlternatives ??= [
      { ALT: () => ({ Equals: [this.CONSUME(Equals)] }) },
      { ALT: () => ({ NotEquals: [this.CONSUME(NotEquals)] }) },
      { ALT: () => ({ Less: [this.CONSUME(Less)] }) },
      { ALT: () => ({ LessEquals: [this.CONSUME(LessEquals)] }) },
      { ALT: () => ({ Greater: [this.CONSUME(Greater)] }) },
      { ALT: () => ({ GreaterEquals: [this.CONSUME(GreaterEquals)] }) },
    ])),
  }));

  /** `(v1, v2, …)`; `()` is the empty set. */
  readonly valueList = this.RULE('valueList', (): ValueListCstNode => {
    const open = this.CONSUME(LParen);
    const values: ValueCstNode[] = [];
    this.MANY_SEP({
      SEP: Comma,
      DEF: () => {
        values.push(this.SUBRULE(this.value));
      },
    });
    const close = this.CONSUME(RParen);
    return { name: 'valueList', children: { LParen: [open], value: some(values), RParen: [close] } };
  });

  /** `( c1 or c2 … )` or `( c1 and c2 … )`: one connective per group, checked by the visitor. */
  readonly group = this.RULE('group', (): GroupCstNode => {
    const open = this.CONSUME(LParen);
    const conditions = [this.SUBRULE(this.condition)];
    const ands: IToken[] = [];
    const ors: IToken[] = [];
    this.MANY(() => {
      connective(
        this.OR((this.groupJoinAlternatives ??= [{ ALT: () => this.CONSUME(And) }, { ALT: () => this.CONSUME(Or) }])),
        ands,
        ors,
      );
      conditions.push(this.SUBRULE2(this.condition));
    });
    const close = this.CONSUME(RParen);
    return { name: 'group', children: { LParen: [open], condition: conditions, And: some(ands), Or: some(ors), RParen: [close] } };
  });

  /** `search "text"` or `search title "…", code "…"`, then optionally `language german`. */
  readonly searchClause = this.RULE('searchClause', (): SearchClauseCstNode => {
    const search = this.CONSUME(Search);
    const children = this.own(this.OR((this.searchAlternatives ??= [
      { ALT: () => ({ Search: [], String: [this.CONSUME(StringLiteral)] }) },
      { ALT: () => ({ Search: [], Parameter: [this.CONSUME(Parameter)] }) },
      {
        ALT: () => {
          const fields: FieldSearchCstNode[] = [];
          this.AT_LEAST_ONE_SEP({
            SEP: Comma,
            DEF: () => {
              fields.push(this.SUBRULE(this.fieldSearch));
            },
          });
          return { Search: [], fieldSearch: fields };
        },
      },
    ])));
    children.Search = [search];
    this.OPTION(() => {
      children.Language = [this.CONSUME(Language)];
      const name = this.OR2((this.languageAlternatives ??= [{ ALT: () => this.CONSUME(Bareword) }, { ALT: () => this.CONSUME2(StringLiteral) }]));
      // the language's name: a bareword, or a string after the search text's string (`to-ast.ts` takes the last)
      if (name.tokenType === Bareword) children.Bareword = [name];
      else children.String = [...(children.String ?? []), name];
    });
    return { name: 'searchClause', children };
  });

  /** `title "linear"`: one field of a per-field search. */
  readonly fieldSearch = this.RULE('fieldSearch', (): FieldSearchCstNode => {
    const field = this.SUBRULE(this.field);
    const children = this.own(this.OR((this.searchTextAlternatives ??= [
      { ALT: () => ({ field: [], String: [this.CONSUME(StringLiteral)] }) },
      { ALT: () => ({ field: [], Parameter: [this.CONSUME(Parameter)] }) },
    ])));
    children.field = [field];
    return { name: 'fieldSearch', children };
  });

  /**
   * What a condition tests: a field, or (in `having`) an aggregate. `where`
   * takes only fields; the visitor says so (AGGREGATE_IN_WHERE), and a
   * bucket is refused the same way.
   */
  readonly operand = this.RULE('operand', (): OperandCstNode => ({
    name: 'operand',
    children: this.OR((this.operandAlternatives ??= [
      { ALT: () => ({ aggregate: [this.SUBRULE(this.aggregate)] }) },
      { ALT: () => ({ bucket: [this.SUBRULE(this.bucket)] }) },
      { ALT: () => ({ field: [this.SUBRULE(this.field)] }) },
    ])),
  }));

  readonly selectClause = this.RULE('selectClause', (): SelectClauseCstNode => {
    const select = this.CONSUME(Select);
    const distinct = this.OPTION(() => this.CONSUME(Distinct));
    const items: SelectItemCstNode[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        items.push(this.SUBRULE(this.selectItem));
      },
    });
    return { name: 'selectClause', children: { Select: [select], Distinct: optional(distinct), selectItem: items } };
  });

  /** `subject`, `count(*) as n`, `month(start_date) as month` */
  readonly selectItem = this.RULE('selectItem', (): SelectItemCstNode => {
    const children = this.own(this.OR((this.itemAlternatives ??= [
      { ALT: () => ({ aggregate: [this.SUBRULE(this.aggregate)], As: undefined, name: undefined }) },
      { ALT: () => ({ bucket: [this.SUBRULE(this.bucket)], As: undefined, name: undefined }) },
      { ALT: () => ({ field: [this.SUBRULE(this.field)], As: undefined, name: undefined }) },
    ])));
    this.OPTION(() => {
      children.As = [this.CONSUME(As)];
      children.name = [this.SUBRULE(this.name)];
    });
    return { name: 'selectItem', children };
  });

  /** `count(*)`, `count([distinct] f)`, `sum|avg|min|max(f)` */
  readonly aggregate = this.RULE('aggregate', (): AggregateCstNode => ({
    name: 'aggregate',
    children: this.OR((this.aggregateAlternatives ??= [
      {
        ALT: () => {
          const count = this.CONSUME(Count);
          const open = this.CONSUME(LParen);
          const children = this.own(this.OR2((this.countAlternatives ??= [
            { ALT: () => ({ Count: [], LParen: [], Star: [this.CONSUME(Star)] }) },
            {
              ALT: () => {
                const distinct = this.OPTION(() => this.CONSUME(Distinct));
                return { Count: [], LParen: [], Distinct: optional(distinct), field: [this.SUBRULE(this.field)] };
              },
            },
          ])));
          children.Count = [count];
          children.LParen = [open];
          children.RParen = [this.CONSUME(RParen)];
          return children;
        },
      },
      {
        ALT: () => {
          const name = this.OR3((this.aggregateNameAlternatives ??= [
            { ALT: () => this.CONSUME(Sum) },
            { ALT: () => this.CONSUME(Avg) },
            { ALT: () => this.CONSUME(Min) },
            { ALT: () => this.CONSUME(Max) },
          ]));
          const open = this.CONSUME2(LParen);
          const field = this.SUBRULE2(this.field);
          const close = this.CONSUME2(RParen);
          const type = name.tokenType;
          return {
            LParen: [open],
            field: [field],
            RParen: [close],
            Sum: type === Sum ? [name] : undefined,
            Avg: type === Avg ? [name] : undefined,
            Min: type === Min ? [name] : undefined,
            Max: type === Max ? [name] : undefined,
          };
        },
      },
    ])),
  }));

  /** `year|month|week|day(f)`, `bucket(f, width)` */
  readonly bucket = this.RULE('bucket', (): BucketCstNode => ({
    name: 'bucket',
    children: this.OR((this.bucketAlternatives ??= [
      {
        ALT: () => {
          const unit = this.SUBRULE(this.unit);
          const open = this.CONSUME(LParen);
          const field = this.SUBRULE(this.field);
          const close = this.CONSUME(RParen);
          return { unit: [unit], LParen: [open], field: [field], RParen: [close] };
        },
      },
      {
        ALT: () => {
          const bucket = this.CONSUME(Bucket);
          const open = this.CONSUME2(LParen);
          const field = this.SUBRULE2(this.field);
          const comma = this.CONSUME(Comma);
          const width = this.CONSUME(NumberLiteral);
          const close = this.CONSUME2(RParen);
          return { Bucket: [bucket], LParen: [open], field: [field], Comma: [comma], Number: [width], RParen: [close] };
        },
      },
    ])),
  }));

  /** A period of the calendar: the date buckets' names, and a facet's `by`. */
  readonly unit = this.RULE('unit', (): UnitCstNode => ({
    name: 'unit',
    children: this.OR((this.unitAlternatives ??= [
      { ALT: () => ({ Year: [this.CONSUME(Year)] }) },
      { ALT: () => ({ Month: [this.CONSUME(Month)] }) },
      { ALT: () => ({ Week: [this.CONSUME(Week)] }) },
      { ALT: () => ({ Day: [this.CONSUME(Day)] }) },
    ])),
  }));

  /** An `as` name: a bareword or a backtick-quoted name. */
  readonly name = this.RULE('name', (): NameCstNode => ({
    name: 'name',
    children: this.OR((this.nameAlternatives ??= [
      { ALT: () => ({ Bareword: [this.CONSUME(Bareword)] }) },
      { ALT: () => ({ BacktickField: [this.CONSUME(BacktickField)] }) },
    ])),
  }));

  /** `group by subject, month(start_date)`; a name may be a select item's `as` name. */
  readonly groupClause = this.RULE('groupClause', (): GroupClauseCstNode => {
    const group = this.CONSUME(Group);
    const by = this.CONSUME(By);
    const keys: GroupKeyCstNode[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        keys.push(this.SUBRULE(this.groupKey));
      },
    });
    return { name: 'groupClause', children: { Group: [group], By: [by], groupKey: keys } };
  });

  readonly groupKey = this.RULE('groupKey', (): GroupKeyCstNode => ({
    name: 'groupKey',
    children: this.OR((this.groupKeyAlternatives ??= [
      { ALT: () => ({ bucket: [this.SUBRULE(this.bucket)] }) },
      { ALT: () => ({ field: [this.SUBRULE(this.field)] }) },
    ])),
  }));

  /** `having n > 3 and avg(credits) >= 5`: where's conditions, over names and aggregates. */
  readonly havingClause = this.RULE('havingClause', (): HavingClauseCstNode => {
    const having = this.CONSUME(Having);
    const conditions = [this.SUBRULE(this.condition)];
    const ands: IToken[] = [];
    const ors: IToken[] = [];
    this.MANY(() => {
      connective(
        this.OR((this.havingJoinAlternatives ??= [{ ALT: () => this.CONSUME(And) }, { ALT: () => this.CONSUME(Or) }])),
        ands,
        ors,
      );
      conditions.push(this.SUBRULE2(this.condition));
    });
    return { name: 'havingClause', children: { Having: [having], condition: conditions, And: some(ands), Or: some(ors) } };
  });

  /** `facet subject top 20, start_date by month` */
  readonly facetClause = this.RULE('facetClause', (): FacetClauseCstNode => {
    const facet = this.CONSUME(Facet);
    const items: FacetItemCstNode[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        items.push(this.SUBRULE(this.facetItem));
      },
    });
    return { name: 'facetClause', children: { Facet: [facet], facetItem: items } };
  });

  readonly facetItem = this.RULE('facetItem', (): FacetItemCstNode => {
    const field = this.SUBRULE(this.field);
    const numbers: IToken[] = [];
    let by: IToken | undefined;
    let unit: UnitCstNode | undefined;
    this.OPTION(() => {
      by = this.CONSUME(By);
      const width = this.OR((this.facetByAlternatives ??= [{ ALT: () => this.SUBRULE(this.unit) }, { ALT: () => this.CONSUME(NumberLiteral) }]));
      if ('image' in width) numbers.push(width);
      else unit = width;
    });
    const top = this.OPTION2(() => {
      const token = this.CONSUME(Top);
      numbers.push(this.CONSUME2(NumberLiteral));
      return token;
    });
    return {
      name: 'facetItem',
      children: { field: [field], By: optional(by), unit: unit === undefined ? undefined : [unit], Number: some(numbers), Top: optional(top) },
    };
  });

  readonly orderClause = this.RULE('orderClause', (): OrderClauseCstNode => {
    const order = this.CONSUME(Order);
    const by = this.CONSUME(By);
    const keys: SortKeyCstNode[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        keys.push(this.SUBRULE(this.sortKey));
      },
    });
    return { name: 'orderClause', children: { Order: [order], By: [by], sortKey: keys } };
  });

  readonly sortKey = this.RULE('sortKey', (): SortKeyCstNode => {
    const children = this.own(this.OR3((this.sortOperandAlternatives ??= [
      { ALT: () => ({ aggregate: [this.SUBRULE(this.aggregate)], Asc: undefined, Desc: undefined, Nulls: undefined, First: undefined, Last: undefined }) },
      { ALT: () => ({ field: [this.SUBRULE(this.field)], Asc: undefined, Desc: undefined, Nulls: undefined, First: undefined, Last: undefined }) },
    ])));
    this.OPTION(() => {
      const direction = this.OR((this.directionAlternatives ??= [{ ALT: () => this.CONSUME(Asc) }, { ALT: () => this.CONSUME(Desc) }]));
      if (direction.tokenType === Desc) children.Desc = [direction];
      else children.Asc = [direction];
    });
    this.OPTION2(() => {
      children.Nulls = [this.CONSUME(Nulls)];
      const which = this.OR2((this.nullsAlternatives ??= [{ ALT: () => this.CONSUME(First) }, { ALT: () => this.CONSUME(Last) }]));
      if (which.tokenType === Last) children.Last = [which];
      else children.First = [which];
    });
    return { name: 'sortKey', children };
  });

  readonly limitClause = this.RULE('limitClause', (): LimitClauseCstNode => {
    const limit = this.CONSUME(Limit);
    const children = this.own(this.OR((this.limitAlternatives ??= [
      { ALT: () => ({ Limit: [], Number: [this.CONSUME(NumberLiteral)] }) },
      { ALT: () => ({ Limit: [], Parameter: [this.CONSUME(Parameter)] }) },
    ])));
    children.Limit = [limit];
    return { name: 'limitClause', children };
  });

  readonly offsetClause = this.RULE('offsetClause', (): OffsetClauseCstNode => {
    const offset = this.CONSUME(Offset);
    const children = this.own(this.OR((this.offsetAlternatives ??= [
      { ALT: () => ({ Offset: [], Number: [this.CONSUME(NumberLiteral)] }) },
      { ALT: () => ({ Offset: [], Parameter: [this.CONSUME(Parameter)] }) },
    ])));
    children.Offset = [offset];
    return { name: 'offsetClause', children };
  });

  /**
   * A bareword or a backtick-quoted name; a UUID-shaped name lexes as one
   * `Uuid` token, so it is a field too. `` c.`school year` `` is a qualified
   * backtick name (a qualified bareword, `c.subject`, is one `Bareword`).
   */
  readonly field = this.RULE('field', (): FieldCstNode => ({
    name: 'field',
    children: this.OR((this.fieldAlternatives ??= [
      { ALT: () => ({ Bareword: [this.CONSUME(Bareword)] }) },
      {
        ALT: () => {
          const qualifier = this.OPTION(() => this.CONSUME(Qualifier));
          return { Qualifier: optional(qualifier), BacktickField: [this.CONSUME(BacktickField)] };
        },
      },
      { ALT: () => ({ Uuid: [this.CONSUME(Uuid)] }) },
    ])),
  }));

  readonly value = this.RULE('value', (): ValueCstNode => ({
    name: 'value',
    children: this.OR((this.valueAlternatives ??= [
      { ALT: () => ({ String: [this.CONSUME(StringLiteral)] }) },
      { ALT: () => ({ Number: [this.CONSUME(NumberLiteral)] }) },
      { ALT: () => ({ Bareword: [this.CONSUME(Bareword)] }) },
      { ALT: () => ({ Uuid: [this.CONSUME(Uuid)] }) },
      { ALT: () => ({ DateTime: [this.CONSUME(DateTime)] }) },
      { ALT: () => ({ True: [this.CONSUME(True)] }) },
      { ALT: () => ({ False: [this.CONSUME(False)] }) },
      { ALT: () => ({ Null: [this.CONSUME(Null)] }) },
      { ALT: () => ({ Parameter: [this.CONSUME(Parameter)] }) },
    ])),
  }));
}

/**
 * The tokens that may follow a source (so a name before them is its alias):
 * a hard keyword (`where`, `and` of a join's keys, …), a clause's soft
 * keyword, `;`, or the end.
 */
function endsSource(type: TokenType): boolean {
  return type.name === 'EOF' || type === Semicolon || (type.CATEGORIES?.includes(Keyword) ?? false) || afterSource.has(type);
}

/** The one parser instance: construction analyses the grammar (milliseconds), parsing reuses it. */
export const queryParser = new QueryParser();

/** The names of the grammar's rules, as `grammar/query.ebnf` spells them. */
export type RuleName =
  | 'query' | 'source' | 'resource' | 'joinClause' | 'keyPair' | 'clause' | 'whereClause' | 'condition' | 'comparison'
  | 'operand' | 'operator' | 'valueList' | 'group' | 'searchClause' | 'fieldSearch' | 'selectClause' | 'selectItem'
  | 'aggregate' | 'bucket' | 'unit' | 'name' | 'groupClause' | 'groupKey' | 'havingClause' | 'facetClause' | 'facetItem'
  | 'orderClause' | 'sortKey' | 'limitClause' | 'offsetClause' | 'field' | 'value';
