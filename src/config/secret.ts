/**
 * A token held in memory. It prints as `[redacted]` everywhere (string
 * conversion, JSON, `util.inspect`), so a config object dumped into a log or
 * an error cannot carry it; only `reveal()` gives the text.
 */
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** the token itself, for the `Authorization` header and nothing else */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }
}

// util.inspect's hook, set beside the class: a computed method name cannot be written into a declaration file emitted
// file by file (scripts/emit-declarations.ts).
Object.defineProperty(Secret.prototype, inspect.custom, { value: (): string => 'Secret([redacted])' });
