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
import { CstParser, type AtLeastOneSepMethodOpts, type CstNode, type IOrAlt } from 'chevrotain';
import {
  allTokens, And, Asc, BacktickField, Between, By, Comma, Desc, Distinct, Equals, False, First, From, Greater,
  GreaterEquals, Ilike, In, Is, Language, Last, Less, LessEquals, Like, Limit, LParen, Not, NotEquals, Null, Nulls,
  NumberLiteral, Offset, Or, Order, Parameter, RParen, Search, Select, Semicolon, StringLiteral, True, Uuid,
  Where, Bareword, DateTime,
} from './tokens.js';

/** The alternatives of one `OR`, kept between calls. */
type Alternatives = IOrAlt<unknown>[] | undefined;
/** The item and separator of one comma-separated list, kept between calls. */
type ListItems = AtLeastOneSepMethodOpts<unknown> | undefined;

export class QueryParser extends CstParser {
  // Each `OR` reuses the array of alternatives made on its first call
  // (Chevrotain's performance guide), and each comma-separated list its
  // options: a new array of closures per call costs more than the choice
  // itself, and much more under tsx/vitest, whose keepNames wraps every
  // named closure as it is created. The caches are declared here, before the
  // rules, so the parser's shape is fixed when it is built; what they hold
  // has no per-call state.
  private resourceAlternatives: Alternatives;
  private clauseAlternatives: Alternatives;
  private whereJoinAlternatives: Alternatives;
  private conditionAlternatives: Alternatives;
  private comparisonAlternatives: Alternatives;
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

  /** Chevrotain's stack of the syntax-tree nodes being built (internal to its tree builder). */
  declare private CST_STACK: CstNode[];

  constructor() {
    // No recovery: `parse` reports the first error and stops, which keeps the
    // error path simple and the happy path free of bookkeeping.
    super(allTokens, { recoveryEnabled: false, nodeLocationTracking: 'none' });
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

  /** `from R` then clauses in any order, and one optional `;` (the REPL's terminator). */
  readonly query = this.RULE('query', () => {
    this.CONSUME(From);
    this.SUBRULE(this.resource);
    this.MANY(() => this.SUBRULE(this.clause));
    this.OPTION(() => this.CONSUME(Semicolon));
  });

  readonly resource = this.RULE('resource', () => {
    this.OR((this.resourceAlternatives ??= [
      { ALT: () => this.CONSUME(Uuid) },
      { ALT: () => this.CONSUME(Bareword) },
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly clause = this.RULE('clause', () => {
    this.OR((this.clauseAlternatives ??= [
      { ALT: () => this.SUBRULE(this.whereClause) },
      { ALT: () => this.SUBRULE(this.searchClause) },
      { ALT: () => this.SUBRULE(this.selectClause) },
      { ALT: () => this.SUBRULE(this.orderClause) },
      { ALT: () => this.SUBRULE(this.limitClause) },
      { ALT: () => this.SUBRULE(this.offsetClause) },
    ]));
  });

  readonly whereClause = this.RULE('whereClause', () => {
    this.CONSUME(Where);
    this.SUBRULE(this.condition);
    this.MANY(() => {
      this.OR((this.whereJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    });
  });

  /** `[not] (comparison | group)` */
  readonly condition = this.RULE('condition', () => {
    this.OPTION(() => this.CONSUME(Not));
    this.OR((this.conditionAlternatives ??= [
      { ALT: () => this.SUBRULE(this.comparison) },
      { ALT: () => this.SUBRULE(this.group) },
    ]));
  });

  /**
   * A test of one field: `= != < <= > >=` and a value, `[not] in (…)`,
   * `between v and v`, `[not] like|ilike pattern`, `is [not] null`.
   */
  readonly comparison = this.RULE('comparison', () => {
    this.SUBRULE(this.field);
    this.OR((this.comparisonAlternatives ??= [
      {
        ALT: () => {
          this.SUBRULE(this.operator);
          this.SUBRULE(this.value);
        },
      },
      {
        ALT: () => {
          this.OPTION(() => this.CONSUME(Not));
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
          this.OPTION2(() => this.CONSUME2(Not));
          this.OR2((this.likeAlternatives ??= [
            { ALT: () => this.CONSUME(Like) },
            { ALT: () => this.CONSUME(Ilike) },
          ]));
          this.OR3((this.patternAlternatives ??= [
            { ALT: () => this.CONSUME(StringLiteral) },
            { ALT: () => this.CONSUME(Parameter) },
          ]));
        },
      },
      {
        ALT: () => {
          this.CONSUME(Is);
          this.OPTION3(() => this.CONSUME3(Not));
          this.CONSUME(Null);
        },
      },
    ]));
  });

  readonly operator = this.RULE('operator', () => {
    this.OR((this.operatorAlternatives ??= [
      { ALT: () => this.CONSUME(Equals) },
      { ALT: () => this.CONSUME(NotEquals) },
      { ALT: () => this.CONSUME(Less) },
      { ALT: () => this.CONSUME(LessEquals) },
      { ALT: () => this.CONSUME(Greater) },
      { ALT: () => this.CONSUME(GreaterEquals) },
    ]));
  });

  /** `(v1, v2, …)`; `()` is the empty set. */
  readonly valueList = this.RULE('valueList', () => {
    this.CONSUME(LParen);
    this.MANY_SEP((this.valueListItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.value) }));
    this.CONSUME(RParen);
  });

  /** `( c1 or c2 … )` or `( c1 and c2 … )`: one connective per group, checked by the visitor. */
  readonly group = this.RULE('group', () => {
    this.CONSUME(LParen);
    this.SUBRULE(this.condition);
    this.MANY(() => {
      this.OR((this.groupJoinAlternatives ??= [
        { ALT: () => this.CONSUME(And) },
        { ALT: () => this.CONSUME(Or) },
      ]));
      this.SUBRULE2(this.condition);
    });
    this.CONSUME(RParen);
  });

  /** `search "text"` or `search title "…", code "…"`, then optionally `language german`. */
  readonly searchClause = this.RULE('searchClause', () => {
    this.CONSUME(Search);
    this.OR((this.searchAlternatives ??= [
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
      { ALT: () => this.AT_LEAST_ONE_SEP((this.fieldSearchItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.fieldSearch) })) },
    ]));
    this.OPTION(() => {
      this.CONSUME(Language);
      this.OR2((this.languageAlternatives ??= [
        { ALT: () => this.CONSUME(Bareword) },
        { ALT: () => this.CONSUME2(StringLiteral) },
      ]));
    });
  });

  /** `title "linear"`: one field of a per-field search. */
  readonly fieldSearch = this.RULE('fieldSearch', () => {
    this.SUBRULE(this.field);
    this.OR((this.searchTextAlternatives ??= [
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly selectClause = this.RULE('selectClause', () => {
    this.CONSUME(Select);
    this.OPTION(() => this.CONSUME(Distinct));
    this.AT_LEAST_ONE_SEP((this.selectItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.field) }));
  });

  readonly orderClause = this.RULE('orderClause', () => {
    this.CONSUME(Order);
    this.CONSUME(By);
    this.AT_LEAST_ONE_SEP((this.orderItems ??= { SEP: Comma, DEF: () => this.SUBRULE(this.sortKey) }));
  });

  readonly sortKey = this.RULE('sortKey', () => {
    this.SUBRULE(this.field);
    this.OPTION(() => {
      this.OR((this.directionAlternatives ??= [
        { ALT: () => this.CONSUME(Asc) },
        { ALT: () => this.CONSUME(Desc) },
      ]));
    });
    this.OPTION2(() => {
      this.CONSUME(Nulls);
      this.OR2((this.nullsAlternatives ??= [
        { ALT: () => this.CONSUME(First) },
        { ALT: () => this.CONSUME(Last) },
      ]));
    });
  });

  readonly limitClause = this.RULE('limitClause', () => {
    this.CONSUME(Limit);
    this.OR((this.limitAlternatives ??= [
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  readonly offsetClause = this.RULE('offsetClause', () => {
    this.CONSUME(Offset);
    this.OR((this.offsetAlternatives ??= [
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(Parameter) },
    ]));
  });

  /** A bareword or a backtick-quoted name; a UUID-shaped name lexes as one `Uuid` token, so it is a field too. */
  readonly field = this.RULE('field', () => {
    this.OR((this.fieldAlternatives ??= [
      { ALT: () => this.CONSUME(Bareword) },
      { ALT: () => this.CONSUME(BacktickField) },
      { ALT: () => this.CONSUME(Uuid) },
    ]));
  });

  readonly value = this.RULE('value', () => {
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

/** The one parser instance: construction analyses the grammar (milliseconds), parsing reuses it. */
export const queryParser = new QueryParser();

/** The names of the grammar's rules, as `grammar/query.ebnf` spells them. */
export type RuleName =
  | 'query' | 'resource' | 'clause' | 'whereClause' | 'condition' | 'comparison' | 'operator' | 'valueList' | 'group'
  | 'searchClause' | 'fieldSearch' | 'selectClause' | 'orderClause' | 'sortKey' | 'limitClause' | 'offsetClause'
  | 'field' | 'value';
