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

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}
