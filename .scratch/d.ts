import { queryParser } from '../src/syntax/parser.ts';
import { queryLexer } from '../src/syntax/tokens.ts';
const t = queryLexer.tokenize('from x facet ').tokens;
for (const p of queryParser.computeContentAssist('query', t)) console.log(Object.keys(p), p.nextTokenType.name, p.ruleStack);
