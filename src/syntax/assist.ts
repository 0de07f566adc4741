/**
 * Content assist over the grammar with expressions (docs/expressions.md),
 * told as the grammar before them was: error messages ("expected a value
 * after =") and completions offer fields, values, aggregates and the words
 * of the language where they did, and none of what continues or nests an
 * expression (an operator, a function's name, a literal where a field
 * stands, a `case`). The expressions are the language service's to offer,
 * by name (language-service/complete.ts).
 */
import type { ISyntacticContentAssistPath, TokenType } from 'chevrotain';
import { Concat, DoubleColon, Minus, Percent, Plus, Slash, Star } from './tokens.js';

const operators: ReadonlySet<TokenType> = new Set([Plus, Minus, Slash, Percent, Concat, DoubleColon]);

/** The rules that exist only inside an expression. */
const nestedRules: ReadonlySet<string> = new Set(['functionCall', 'castCall', 'extractCall', 'caseExpression', 'whenClause', 'typeName', 'overClause']);

/** The rules of an expression's levels, whose own tokens are operators (or the unary minus). */
const levelRules: ReadonlySet<string> = new Set(['expression', 'additive', 'multiplicative', 'unary']);

/**
 * What a path of content assist offers, as the grammar before expressions
 * offered it: `skip` it, take it as a `value` (the right side of a
 * comparison, once the `value` rule), or `keep` it as it is.
 */
export function classicPath(path: ISyntacticContentAssistPath): 'skip' | 'value' | 'keep' {
  const stack = path.ruleStack;
  const top = stack[stack.length - 1];
  if (operators.has(path.nextTokenType)) return 'skip';
  if (stack.some((rule) => nestedRules.has(rule))) return 'skip';
  const first = stack.indexOf('expression');
  if (first < 0) return top === 'selectItem' && path.nextTokenType === Star ? 'skip' : 'keep';
  if (stack.indexOf('expression', first + 1) >= 0) return 'skip';
  if (top !== undefined && levelRules.has(top)) return 'skip';
  const rhs = stack[first - 1] === 'condition' && path.occurrenceStack[first] === 2;
  if (rhs) return top === 'primary' || top === 'field' ? 'value' : 'skip';
  if (top === 'primary') return 'skip';
  // a group key was a field or a bucket, a sort key a field or an aggregate
  const aggregate = stack.includes('aggregate');
  const bucket = stack.includes('bucket') || stack.includes('unit');
  if ((aggregate && stack.includes('groupKey')) || (bucket && stack.includes('sortKey'))) return 'skip';
  return 'keep';
}
