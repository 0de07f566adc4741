/** Splitting a script at `;` lives with the syntax (the language service uses it too). */
export { inPlace, splitStatements, type Statement } from '../syntax/statements.js';
