/**
 * The grammar of ckql, and nothing else: rules are class fields without
 * actions, and `to-ast.ts` gives the syntax tree its meaning. Rule names are
 * spelled the same in `grammar/query.ebnf`, and `npm run grammar` draws them.
 *
 * Two places accept more than the language allows, so that the visitor can
 * say precisely what is wrong instead of "unexpected token":
 * - `and` and `or` may follow one another in any mix (MIXED_AND_OR);
 * - clauses may repeat (DUPLICATE_CLAUSE at the second one).
 */
import {
  CstParser, getLookaheadPaths, LLkLookaheadStrategy, tokenMatcher, type AtLeastOneSepMethodOpts, type CstNode, type DSLMethodOpts, type IOrAlt, type IToken, type ParserMethod,
  type Rule, type TokenType,
} from 'chevrotain';
import {
  allTokens, And, As, Asc, Avg, BacktickField, Between, Bucket, By, Comma, Count, DateTime, Day, Desc, Distinct, Equals, Facet,
  False, First, From, Greater, GreaterEquals, Group, Having, Ilike, In, Is, Join, Keyword, Language, Last, Left, Less, LessEquals,
  Like, Limit, LParen, Max, Min, Month, Not, NotEquals, Null, Nulls, NumberLiteral, Offset, On, Or, Order, Parameter,
  Qualifier, RParen, Search, Select, Semicolon, Star, StringLiteral, Sum, Top, True, Uuid, Week, Where, Bareword, Year,
  Case, Cast, Concat, DoubleColon, Else, End, Extract, Minus, Percent, Plus, Slash, Then, When, Over, Partition, Qualify, Union,
} from './tokens.js';

/**
 * The soft keywords that may follow a resource: an alias written without
 * `as` is none of them (`from t group by x` groups; `from t g where …` names `t` `g`).
 */
export const afterSource: ReadonlySet<TokenType> = new Set([Join, Left, On, Group, Having, Qualify, Facet, Union]);

/** A rule of the grammar, as a method of the parser (declared so each file's declarations can be emitted alone). */
type RuleMethod = ParserMethod<[], CstNode>;
/** The alternatives of one `OR`, kept between calls. */
type Alternatives = IOrAlt<unknown>[] | undefined;
/** The item and separator of one comma-separated list, kept between calls. */
type ListItems = AtLeastOneSepMethodOpts<unknown> | undefined;
/** What one `OPTION` or `MANY` reads, kept between calls. */
type Body = (() => unknown) | undefined;
/** A gated `OPTION`'s gate and body, kept between calls. */
type Option = DSLMethodOpts<unknown> | undefined;

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

export class QueryParser extends CstParser {
  // Each `OR` reuses the array of alternatives made on its first call
  // (Chevrotain's performance guide), each comma-separated list its
  // options, and each `OPTION` and `MANY` its body: a new array of closures
  // per call costs more than the choice itself, and much more under
  // tsx/vitest, whose keepNames wraps every named closure as it is created
  // (the bodies alone were ≈ 2 % of `compile(text)`: about ten closures per
  // query). The caches are declared here, before the rules, so the parser's
  // shape is fixed when it is built; what they hold has no per-call state.
  private resourceAlternatives: Alternatives;
  private aliasAlternatives: Alternatives;
  private aggregateAlternatives: Alternatives;
  private countAlternatives: Alternatives;
  private aggregateNameAlternatives: Alternatives;
  private bucketAlternatives: Alternatives;
  private unitAlternatives: Alternatives;
  private havingJoinAlternatives: Alternatives;
  private facetByAlternatives: Alternatives;
  private nameAlternatives: Alternatives;
  private groupItems: ListItems;
  private facetItems: ListItems;
  private clauseAlternatives: Alternatives;
  private whereJoinAlternatives: Alternatives;
  private conditionAlternatives: Alternatives;
  private testAlternatives: Alternatives;
  private operatorAlternatives: Alternatives;
  private likeAlternatives: Alternatives;
  private patternAlternatives: Alternatives;
  private groupJoinAlternatives: Alternatives;
  private searchAlternatives: Alternatives;
  private searchTextAlternatives: Alternatives;
  private languageAlternatives: Alternatives;
  private directionAlternatives: Alternatives;
  private nullsAlternatives: Alternatives;
  private limitAlternatives: Alternatives;
  private offsetAlternatives: Alternatives;
  private fieldAlternatives: Alternatives;
  private valueAlternatives: Alternatives;
  private valueListItems: ListItems;
  private selectItems: ListItems;
  private orderItems: ListItems;
  private fieldSearchItems: ListItems;
  private joinsBody: Body;
  private unionBody: Body;
  private clausesBody: Body;
  private semicolonBody: Body;
  private asBody: Body;
  private leftBody: Body;
  private keyPairsBody: Body;
  private whereBody: Body;
  private notBody: Body;
  private notInBody: Body;
  private notLikeBody: Body;
  private isNotBody: Body;
  private groupBody: Body;
  private languageBody: Body;
  private selectDistinctBody: Body;
  private asNameBody: Body;
  private countDistinctBody: Body;
  private havingBody: Body;
  private facetByBody: Body;
  private facetTopBody: Body;
  private directionBody: Body;
  private nullsBody: Body;
  private qualifierBody: Body;
  private aliasOption: Option;
  private primaryAlternatives: Alternatives;
  private concatBody: Body;
  private additiveBody: Body;
  private additiveAlternatives: Alternatives;
  private multiplicativeBody: Body;
  private multiplicativeAlternatives: Alternatives;
  private negateBody: Body;
  private castBody: Body;
  private argumentItems: ListItems;
  private whenBody: Body;
  private whenJoinBody: Body;
  private whenJoinAlternatives: Alternatives;
  private elseBody: Body;
  private selectItemAlternatives: Alternatives;
  private qualifyBody: Body;
  private qualifyJoinAlternatives: Alternatives;
  private aggregateOverBody: Body;
  private functionOverBody: Body;
  private partitionBody: Body;
  private partitionItems: ListItems;
  private windowOrderBody: Body;
  private windowOrderItems: ListItems;

  /** Chevrotain's stack of the syntax-tree nodes being built (internal to its tree builder). */
  declare private CST_STACK: CstNode[];

  /**
   * @param validate check the grammar itself (ambiguous alternatives, left
   * recursion, …) as it is analysed: a third of the construction's time, for
   * a grammar that does not change at run time, so `queryParser()` skips it
   * and test/syntax/grammar-ebnf.test.ts builds a parser that checks.
   */
  constructor(validate = false) {
    // No recovery: `parse` reports the first error and stops, which keeps the
    // error path simple and the happy path free of bookkeeping.
    super(allTokens, { recoveryEnabled: false, nodeLocationTracking: 'none', lookaheadStrategy: new FirstTokenLookahead(), skipValidations: !validate });
    this.performSelfAnalysis();
  }

  /**
   * Starts the syntax-tree node of a rule. Chevrotain 11 makes each node's
   * `children` with `Object.create(null)`, which V8 keeps as a hash table
   * from the start; an object literal gets a hidden class, so filling it
   * here and reading it in `to-ast.ts` costs less: about a tenth of
   * `compile(text)` on the bench corpus. The keys are token and rule names,
   * none of which `Object.prototype` has, and nodes carry no location
   * (`nodeLocationTracking: 'none'`). This replaces an internal hook of
   * Chevrotain's tree builder; `test/syntax/parse.test.ts` checks it is used.
   */
  protected cstInvocationStateUpdate(fullRuleName: string): void {
    this.CST_STACK.push({ name: fullRuleName, children: {} });
  }

  /**
   * Stores a consumed token in the node being built, as Chevrotain's tree
   * builder does, without its call to a location hook that does nothing
   * here (`nodeLocationTracking: 'none'`). Replaces an internal hook, as
   * `cstInvocationStateUpdate` does.
   */
  protected cstPostTerminal(key: string, token: IToken): void {
    const children = this.CST_STACK[this.CST_STACK.length - 1]!.children;
    const list = children[key] as IToken[] | undefined;
    if (list === undefined) children[key] = [token];
    else list.push(token);
  }

  /** The same for a finished rule's node (`cstPostTerminal`). */
  protected cstPostNonTerminal(node: CstNode, key: string): void {
    const children = this.CST_STACK[this.CST_STACK.length - 1]!.children;
    const list = children[key] as CstNode[] | undefined;
    if (list === undefined) children[key] = [node];
    else list.push(node);
  }

  /** Whether the next token is an alias written without `as` (see `source`). */
  private impliedAlias(): boolean {
    const next = this.LA(1).tokenType;
    return (next === Bareword || (next.CATEGORIES?.includes(Bareword) === true && !afterSource.has(next))) && endsSource(this.LA(2).tokenType);
  }

  /**
   * `from R [as a]`, the joins, then clauses in any order, and one optional
   * `;` (the REPL's terminator). The clauses are alternatives of the query
   * itself, not of a `clause` rule of their own: a rule that only chooses
   * costs a syntax-tree node per clause, and `to-ast.ts` reads the clauses
   * in the order of their first tokens.
   */
  readonly query: RuleMethod = this.RULE('query', () => {
    this.CONSUME(From);
    this.SUBRULE(this.source);
    this.MANY((this.joinsBody ??= () => this.SUBRULE(this.joinClause)));
    this.MANY2((this.clausesBody ??= () => {
      this.OR((this.clauseAlternatives ??= [
        { ALT: () => this.SUBRULE(this.whereClause) },
        { ALT: () => this.SUBRULE(this.searchClause) },
        { ALT: () => this.SUBRULE(this.selectClause) },
        { ALT: () => this.SUBRULE(this.groupClause) },
        { ALT: () => this.SUBRULE(this.havingClause) },
        { ALT: () => this.SUBRULE(this.qualifyClause) },
        { ALT: () => this.SUBRULE(this.facetClause) },
        { ALT: () => this.SUBRULE(this.orderClause) },
        { ALT: () => this.SUBRULE(this.limitClause) },
        { ALT: () => this.SUBRULE(this.offsetClause) },
      ]));
    }));
    this.OPTION((this.semicolonBody ??= () => this.CONSUME(Semicolon)));
  });

  /**
   * A resource and its alias. Without `as`, a name is an alias only where a
   * source may end (before a keyword, `join`, `on`, a clause, `;` or the
   * end), so `from courses wher subject = math` is still a typo of `where`.
   */
  readonly source: RuleMethod = this.RULE('source', () => {
    this.SUBRULE(this.resource);
    this.MANY((this.unionBody ??= () => {
      this.CONSUME(Union);
      this.SUBRULE2(this.resource);
    }));
    this.OPTION((this.aliasOption ??= {
      GATE: () => this.LA(1).tokenType === As || this.impliedAlias(),
      DEF: () => {
        this.OPTION2((this.asBody ??= () => this.CONSUME(As)));
        this.CONSUME(Bareword);
      },
    }));
  });

  /** `[left] join R [as] a on a.k = b.k and …` */
  readonly joinClause: RuleMethod = this.RULE('joinClause', () => {
    this.OPTION((this.leftBody ??= () => this.CONSUME(Left)));
    this.CONSUME(Join);
    this.SUBRULE(this.source);
    this.CONSUME(On);
    this.SUBRULE(this.keyPair);
    this.MANY((this.keyPairsBody ??= () => {
      this.CONSUME(And);
      this.SUBRULE2(this.keyPair);
    }));
  });

  /** `e.course = c.code`: equality joins only. */
  readonly keyPair: RuleMethod = this.RULE('keyPair', () => {
    this.SUBRULE(this.field);
    this.CONSUME(Equals);
    this.SUBRULE2(this.field);
  });

  readonly resource: RuleMethod = this.RULE('resource', () => {
    this.OR((this.resourceAlternatives ??= [
      { ALT: () => this.CONSUME(Uuid) },
      { ALT: () => this.CONSUME(Bareword) },
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly whereClause: RuleMethod = this.RULE('whereClause', () => {
    this.CONSUME(Where);
    this.SUBRULE(this.condition);
    this.MANY((this.whereBody ??= () => {
      this.OR((this.whereJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    }));
  });

  /**
   * `[not]`, then a test of one operand or a group. The operand is a field,
   * or in `having` an aggregate (`where` takes only fields, and the visitor
   * says so: AGGREGATE_IN_WHERE; a bucket is refused the same way); the test
   * is `= != < <= > >=` and a value, `[not] in (…)`, `between v and v`,
   * `[not] like|ilike pattern` or `is [not] null`. The operand, the operator
   * and the test are read here rather than by rules of their own: a rule
   * that only chooses among alternatives costs a syntax-tree node every
   * time, and a query is mostly conditions.
   */
  readonly condition: RuleMethod = this.RULE('condition', () => {
    this.OPTION((this.notBody ??= () => this.CONSUME(Not)));
    // A `(` starts a group of conditions, or an expression (`(a + b) > 3`):
    // which one, the token after its `)` says (`startsGroup`), so the group
    // is tried first under that gate and the ambiguity is known.
    this.OR({
      IGNORE_AMBIGUITIES: true,
      // one token: the gates choose between a test and a group, so `()` fails at its `)` as before
      MAX_LOOKAHEAD: 1,
      DEF: (this.conditionAlternatives ??= [
      {
        GATE: () => this.startsTest(),
        ALT: () => {
          this.SUBRULE(this.expression);
          this.OR3((this.testAlternatives ??= [
            {
              ALT: () => {
                this.OR4((this.operatorAlternatives ??= [
                  { ALT: () => this.CONSUME(Equals) },
                  { ALT: () => this.CONSUME(NotEquals) },
                  { ALT: () => this.CONSUME(Less) },
                  { ALT: () => this.CONSUME(LessEquals) },
                  { ALT: () => this.CONSUME(Greater) },
                  { ALT: () => this.CONSUME(GreaterEquals) },
                ]));
                this.SUBRULE2(this.expression);
              },
            },
            {
              ALT: () => {
                this.OPTION2((this.notInBody ??= () => this.CONSUME2(Not)));
                this.CONSUME(In);
                this.SUBRULE(this.valueList);
              },
            },
            {
              ALT: () => {
                this.CONSUME(Between);
                this.SUBRULE2(this.value);
                this.CONSUME(And);
                this.SUBRULE3(this.value);
              },
            },
            {
              ALT: () => {
                this.OPTION3((this.notLikeBody ??= () => this.CONSUME3(Not)));
                this.OR5((this.likeAlternatives ??= [
                  { ALT: () => this.CONSUME(Like) },
                  { ALT: () => this.CONSUME(Ilike) },
                ]));
                this.OR6((this.patternAlternatives ??= [
                  { ALT: () => this.CONSUME(StringLiteral) },
                  { ALT: () => this.CONSUME(Parameter) },
                ]));
              },
            },
            {
              ALT: () => {
                this.CONSUME(Is);
                this.OPTION4((this.isNotBody ??= () => this.CONSUME4(Not)));
                this.CONSUME(Null);
              },
            },
          ]));
        },
      },
      { ALT: () => this.SUBRULE(this.group) },
      ]),
    });
  });

  /**
   * Whether a test starts here, not a group (`startsGroup`) and not a lone
   * value: a condition tests a field or compares an expression, so
   * `"school year" = 1` and `2020 = a` stay errors whose hint says to quote
   * a field name with backticks.
   */
  private startsTest(): boolean {
    if (this.startsGroup()) return false;
    return !literalTokens.has(this.LA(1).tokenType) || arithmetic.has(this.LA(2).tokenType);
  }

  /** Whether the `(` ahead opens a group of conditions: its `)` is followed by nothing that continues an expression. */
  private startsGroup(): boolean {
    if (this.LA(1).tokenType !== LParen) return false;
    let depth = 0;
    for (let k = 1; ; k++) {
      const type = this.LA(k).tokenType;
      if (type.name === 'EOF') return true;
      if (type === LParen) depth++;
      else if (type === RParen && --depth === 0) return !continuesExpression.has(this.LA(k + 1).tokenType);
    }
  }

  /** `(v1, v2, …)`; `()` is the empty set. */
  readonly valueList: RuleMethod = this.RULE('valueList', () => {
    this.CONSUME(LParen);
    this.MANY_SEP((this.valueListItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.value) }));
    this.CONSUME(RParen);
  });

  /** `( c1 or c2 … )` or `( c1 and c2 … )`: one connective per group, checked by the visitor. */
  readonly group: RuleMethod = this.RULE('group', () => {
    this.CONSUME(LParen);
    this.SUBRULE(this.condition);
    this.MANY((this.groupBody ??= () => {
      this.OR((this.groupJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    }));
    this.CONSUME(RParen);
  });

  /** `search "text"` or `search title "…", code "…"`, then optionally `language german`. */
  readonly searchClause: RuleMethod = this.RULE('searchClause', () => {
    this.CONSUME(Search);
    this.OR((this.searchAlternatives ??= [
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
      { ALT: () => this.AT_LEAST_ONE_SEP((this.fieldSearchItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.fieldSearch) })) },
    ]));
    this.OPTION((this.languageBody ??= () => {
      this.CONSUME(Language);
      this.OR2((this.languageAlternatives ??= [
        { ALT: () => this.CONSUME(Bareword) },
        { ALT: () => this.CONSUME2(StringLiteral) },
      ]));
    }));
  });

  /** `title "linear"`: one field of a per-field search. */
  readonly fieldSearch: RuleMethod = this.RULE('fieldSearch', () => {
    this.SUBRULE(this.field);
    this.OR((this.searchTextAlternatives ??= [
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly selectClause: RuleMethod = this.RULE('selectClause', () => {
    this.CONSUME(Select);
    this.OPTION((this.selectDistinctBody ??= () => this.CONSUME(Distinct)));
    this.AT_LEAST_ONE_SEP((this.selectItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.selectItem) }));
  });

  /** `subject`, `count(*) as n`, `month(start_date) as month` */
  readonly selectItem: RuleMethod = this.RULE('selectItem', () => {
    this.OR((this.selectItemAlternatives ??= [
      { ALT: () => this.CONSUME(Star) },
      { ALT: () => this.SUBRULE(this.expression) },
    ]));
    this.OPTION((this.asNameBody ??= () => {
      this.CONSUME(As);
      this.SUBRULE(this.name);
    }));
  });

  /** `count(*)`, `count([distinct] x)`, `sum|avg|min|max(x)`: `x` a field or an expression (`sum(price * qty)`) */
  readonly aggregate: RuleMethod = this.RULE('aggregate', () => {
    this.OR((this.aggregateAlternatives ??= [
      {
        ALT: () => {
          this.CONSUME(Count);
          this.CONSUME(LParen);
          this.OR2((this.countAlternatives ??= [
            { ALT: () => this.CONSUME(Star) },
            {
              ALT: () => {
                this.OPTION((this.countDistinctBody ??= () => this.CONSUME(Distinct)));
                this.SUBRULE(this.expression);
              },
            },
          ]));
          this.CONSUME(RParen);
        },
      },
      {
        ALT: () => {
          this.OR3((this.aggregateNameAlternatives ??= [
            { ALT: () => this.CONSUME(Sum) },
            { ALT: () => this.CONSUME(Avg) },
            { ALT: () => this.CONSUME(Min) },
            { ALT: () => this.CONSUME(Max) },
          ]));
          this.CONSUME2(LParen);
          this.SUBRULE2(this.expression);
          this.CONSUME2(RParen);
        },
      },
    ]));
    this.OPTION2((this.aggregateOverBody ??= () => this.SUBRULE(this.overClause)));
  });

  /** `year|month|week|day(f)`, `bucket(f, width)` */
  readonly bucket: RuleMethod = this.RULE('bucket', () => {
    this.OR((this.bucketAlternatives ??= [
      {
        ALT: () => {
          this.SUBRULE(this.unit);
          this.CONSUME(LParen);
          this.SUBRULE(this.field);
          this.CONSUME(RParen);
        },
      },
      {
        ALT: () => {
          this.CONSUME(Bucket);
          this.CONSUME2(LParen);
          this.SUBRULE2(this.field);
          this.CONSUME(Comma);
          this.CONSUME(NumberLiteral);
          this.CONSUME2(RParen);
        },
      },
    ]));
  });

  /** A period of the calendar: the date buckets' names, and a facet's `by`. */
  readonly unit: RuleMethod = this.RULE('unit', () => {
    this.OR((this.unitAlternatives ??= [
      { ALT: () => this.CONSUME(Year) },
      { ALT: () => this.CONSUME(Month) },
      { ALT: () => this.CONSUME(Week) },
      { ALT: () => this.CONSUME(Day) },
    ]));
  });

  /** An `as` name: a bareword or a backtick-quoted name. */
  readonly name: RuleMethod = this.RULE('name', () => {
    this.OR((this.nameAlternatives ??= [
      { ALT: () => this.CONSUME(Bareword) },
      { ALT: () => this.CONSUME(BacktickField) },
    ]));
  });

  /** `group by subject, month(start_date)`; a name may be a select item's `as` name. */
  readonly groupClause: RuleMethod = this.RULE('groupClause', () => {
    this.CONSUME(Group);
    this.CONSUME(By);
    this.AT_LEAST_ONE_SEP((this.groupItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.groupKey) }));
  });

  readonly groupKey: RuleMethod = this.RULE('groupKey', () => {
    this.SUBRULE(this.expression);
  });

  /** `having n > 3 and avg(credits) >= 5`: where's conditions, over names and aggregates. */
  readonly havingClause: RuleMethod = this.RULE('havingClause', () => {
    this.CONSUME(Having);
    this.SUBRULE(this.condition);
    this.MANY((this.havingBody ??= () => {
      this.OR((this.havingJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    }));
  });

  /** `qualify r <= 3`: having's conditions, over the rows once their windows are computed. */
  readonly qualifyClause: RuleMethod = this.RULE('qualifyClause', () => {
    this.CONSUME(Qualify);
    this.SUBRULE(this.condition);
    this.MANY((this.qualifyBody ??= () => {
      this.OR((this.qualifyJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    }));
  });

  /** `over (partition by e, … order by k desc, …)`: the window of a window function or an aggregate. */
  readonly overClause: RuleMethod = this.RULE('overClause', () => {
    this.CONSUME(Over);
    this.CONSUME(LParen);
    this.OPTION((this.partitionBody ??= () => {
      this.CONSUME(Partition);
      this.CONSUME(By);
      this.AT_LEAST_ONE_SEP((this.partitionItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.expression) }));
    }));
    this.OPTION2((this.windowOrderBody ??= () => {
      this.CONSUME(Order);
      this.CONSUME2(By);
      this.AT_LEAST_ONE_SEP2((this.windowOrderItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.sortKey) }));
    }));
    this.CONSUME(RParen);
  });

  /** `facet subject top 20, start_date by month` */
  readonly facetClause: RuleMethod = this.RULE('facetClause', () => {
    this.CONSUME(Facet);
    this.AT_LEAST_ONE_SEP((this.facetItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.facetItem) }));
  });

  readonly facetItem: RuleMethod = this.RULE('facetItem', () => {
    this.SUBRULE(this.field);
    this.OPTION((this.facetByBody ??= () => {
      this.CONSUME(By);
      this.OR((this.facetByAlternatives ??= [
        { ALT: () => this.SUBRULE(this.unit) },
        { ALT: () => this.CONSUME(NumberLiteral) },
      ]));
    }));
    this.OPTION2((this.facetTopBody ??= () => {
      this.CONSUME(Top);
      this.CONSUME2(NumberLiteral);
    }));
  });

  readonly orderClause: RuleMethod = this.RULE('orderClause', () => {
    this.CONSUME(Order);
    this.CONSUME(By);
    this.AT_LEAST_ONE_SEP((this.orderItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.sortKey) }));
  });

  readonly sortKey: RuleMethod = this.RULE('sortKey', () => {
    this.SUBRULE(this.expression);
    this.OPTION((this.directionBody ??= () => {
      this.OR((this.directionAlternatives ??= [
        { ALT: () => this.CONSUME(Asc) },
        { ALT: () => this.CONSUME(Desc) },
      ]));
    }));
    this.OPTION2((this.nullsBody ??= () => {
      this.CONSUME(Nulls);
      this.OR2((this.nullsAlternatives ??= [
        { ALT: () => this.CONSUME(First) },
        { ALT: () => this.CONSUME(Last) },
      ]));
    }));
  });

  readonly limitClause: RuleMethod = this.RULE('limitClause', () => {
    this.CONSUME(Limit);
    this.OR((this.limitAlternatives ??= [
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly offsetClause: RuleMethod = this.RULE('offsetClause', () => {
    this.CONSUME(Offset);
    this.OR((this.offsetAlternatives ??= [
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  /**
   * An expression (docs/expressions.md), by PostgreSQL's precedence, lowest
   * first: `||`, then `+ -`, then `* / %`, then unary `-`, then `::`. Each
   * level is a rule whose operands are the next level's, so a chain of one
   * level (`a - b - c`) is one node whose operators `to-ast.ts` reads left
   * to right by their offsets.
   */
  readonly expression: RuleMethod = this.RULE('expression', () => {
    this.SUBRULE(this.additive);
    this.MANY((this.concatBody ??= () => {
      this.CONSUME(Concat);
      this.SUBRULE2(this.additive);
    }));
  });

  readonly additive: RuleMethod = this.RULE('additive', () => {
    this.SUBRULE(this.multiplicative);
    this.MANY((this.additiveBody ??= () => {
      this.OR((this.additiveAlternatives ??= [
        { ALT: () => this.CONSUME(Plus) },
        { ALT: () => this.CONSUME(Minus) },
      ]));
      this.SUBRULE2(this.multiplicative);
    }));
  });

  readonly multiplicative: RuleMethod = this.RULE('multiplicative', () => {
    this.SUBRULE(this.unary);
    this.MANY((this.multiplicativeBody ??= () => {
      this.OR((this.multiplicativeAlternatives ??= [
        { ALT: () => this.CONSUME(Star) },
        { ALT: () => this.CONSUME(Slash) },
        { ALT: () => this.CONSUME(Percent) },
      ]));
      this.SUBRULE2(this.unary);
    }));
  });

  /** `-x`, `- -x`; binds looser than `::`, as in PostgreSQL (`-x::int` is `-(x::int)`). */
  readonly unary: RuleMethod = this.RULE('unary', () => {
    this.MANY((this.negateBody ??= () => this.CONSUME(Minus)));
    this.SUBRULE(this.primary);
    this.MANY2((this.castBody ??= () => {
      this.CONSUME(DoubleColon);
      this.SUBRULE(this.typeName);
    }));
  });

  /**
   * A value, a field, a parenthesised expression, or a call. The calls
   * that are words of the grammar come before a function's name and a
   * field, which the same word would also read (`case`, `count`, `year`).
   */
  readonly primary: RuleMethod = this.RULE('primary', () => {
    this.OR({
      // `then case when …`: a nested case, never a field named `case` before the next `when`
      IGNORE_AMBIGUITIES: true,
      DEF: (this.primaryAlternatives ??= [
        { ALT: () => this.SUBRULE(this.caseExpression) },
        { ALT: () => this.SUBRULE(this.castCall) },
        { ALT: () => this.SUBRULE(this.extractCall) },
        { ALT: () => this.SUBRULE(this.aggregate) },
        { ALT: () => this.SUBRULE(this.bucket) },
        { ALT: () => this.SUBRULE(this.functionCall) },
        {
          ALT: () => {
            this.CONSUME(LParen);
            this.SUBRULE(this.expression);
            this.CONSUME(RParen);
          },
        },
        { ALT: () => this.SUBRULE(this.field) },
        { ALT: () => this.CONSUME(StringLiteral) },
        { ALT: () => this.CONSUME(NumberLiteral) },
        { ALT: () => this.CONSUME(DateTime) },
        { ALT: () => this.CONSUME(True) },
        { ALT: () => this.CONSUME(False) },
        { ALT: () => this.CONSUME(Null) },
        { ALT: () => this.CONSUME(Parameter) },
      ]),
    });
  });

  /** `round(x, 1)`: a name of the closed list (checked by the visitor: UNKNOWN_FUNCTION, WRONG_ARGUMENT_COUNT). */
  readonly functionCall: RuleMethod = this.RULE('functionCall', () => {
    this.CONSUME(Bareword);
    this.CONSUME(LParen);
    this.MANY_SEP((this.argumentItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.expression) }));
    this.CONSUME(RParen);
    this.OPTION((this.functionOverBody ??= () => this.SUBRULE(this.overClause)));
  });

  /** `cast(x as numeric)` */
  readonly castCall: RuleMethod = this.RULE('castCall', () => {
    this.CONSUME(Cast);
    this.CONSUME(LParen);
    this.SUBRULE(this.expression);
    this.CONSUME(As);
    this.SUBRULE(this.typeName);
    this.CONSUME(RParen);
  });

  /** `extract(year from d)`: `date_part('year', d)`. */
  readonly extractCall: RuleMethod = this.RULE('extractCall', () => {
    this.CONSUME(Extract);
    this.CONSUME(LParen);
    this.CONSUME(Bareword);
    this.CONSUME(From);
    this.SUBRULE(this.expression);
    this.CONSUME(RParen);
  });

  /** `case when c then r … [else e] end` */
  readonly caseExpression: RuleMethod = this.RULE('caseExpression', () => {
    this.CONSUME(Case);
    this.AT_LEAST_ONE((this.whenBody ??= () => this.SUBRULE(this.whenClause)));
    this.OPTION((this.elseBody ??= () => {
      this.CONSUME(Else);
      this.SUBRULE(this.expression);
    }));
    this.CONSUME(End);
  });

  /** `when c1 and c2 … then r`: one connective, as in `where`. */
  readonly whenClause: RuleMethod = this.RULE('whenClause', () => {
    this.CONSUME(When);
    this.SUBRULE(this.condition);
    this.MANY((this.whenJoinBody ??= () => {
      this.OR((this.whenJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    }));
    this.CONSUME(Then);
    this.SUBRULE(this.expression);
  });

  /** A type of `cast` and `::`: a name, checked by the visitor (`int`, `numeric`, `text`, …). */
  readonly typeName: RuleMethod = this.RULE('typeName', () => {
    this.CONSUME(Bareword);
  });

  /**
   * A bareword or a backtick-quoted name; a UUID-shaped name lexes as one
   * `Uuid` token, so it is a field too. `` c.`school year` `` is a qualified
   * backtick name (a qualified bareword, `c.subject`, is one `Bareword`).
   */
  readonly field: RuleMethod = this.RULE('field', () => {
    this.OR((this.fieldAlternatives ??= [
      { ALT: () => this.CONSUME(Bareword) },
      {
        ALT: () => {
          this.OPTION((this.qualifierBody ??= () => this.CONSUME(Qualifier)));
          this.CONSUME(BacktickField);
        },
      },
      { ALT: () => this.CONSUME(Uuid) },
    ]));
  });

  readonly value: RuleMethod = this.RULE('value', () => {
    this.OR((this.valueAlternatives ??= [
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(Bareword) },
      { ALT: () => this.CONSUME(Uuid) },
      { ALT: () => this.CONSUME(DateTime) },
      { ALT: () => this.CONSUME(True) },
      { ALT: () => this.CONSUME(False) },
      { ALT: () => this.CONSUME(Null) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });
}

/**
 * The tokens that may follow a source (so a name before them is its alias):
 * a hard keyword (`where`, `and` of a join's keys, …), a clause's soft
 * keyword, `;`, or the end.
 */
function endsSource(type: TokenType): boolean {
  return type.name === 'EOF' || type === Semicolon || (type.CATEGORIES?.includes(Keyword) ?? false) || afterSource.has(type);
}

/** What may follow an expression's `)` in a condition: an operator, or a test. */
const continuesExpression: ReadonlySet<TokenType> = new Set([
  Equals, NotEquals, Less, LessEquals, Greater, GreaterEquals, Plus, Minus, Star, Slash, Percent, Concat, DoubleColon, In, Not, Between, Like, Ilike, Is,
]);

/** The tokens of a value (`primary`'s literals). */
const literalTokens: ReadonlySet<TokenType> = new Set([StringLiteral, NumberLiteral, DateTime, True, False, Null, Parameter]);

/** The operators of arithmetic, after which a literal is an expression's operand. */
const arithmetic: ReadonlySet<TokenType> = new Set([Plus, Minus, Star, Slash, Percent, Concat, DoubleColon]);

let parser: QueryParser | undefined;

/**
 * The one parser instance, made on first use: construction analyses the
 * grammar (tens of milliseconds, a quarter of the REPL's start before this
 * was lazy), parsing reuses it.
 */
export function queryParser(): QueryParser {
  parser ??= new QueryParser();
  return parser;
}

/** The names of the grammar's rules, as `grammar/query.ebnf` spells them. */
export type RuleName =
  | 'query' | 'source' | 'resource' | 'joinClause' | 'keyPair' | 'whereClause' | 'condition' | 'valueList' | 'group' | 'searchClause' | 'fieldSearch' | 'selectClause' | 'selectItem'
  | 'aggregate' | 'bucket' | 'unit' | 'name' | 'groupClause' | 'groupKey' | 'havingClause' | 'qualifyClause' | 'overClause' | 'facetClause' | 'facetItem'
  | 'orderClause' | 'sortKey' | 'limitClause' | 'offsetClause' | 'field' | 'value' | 'expression' | 'additive' | 'multiplicative'
  | 'unary' | 'primary' | 'functionCall' | 'castCall' | 'extractCall' | 'caseExpression' | 'whenClause' | 'typeName';
