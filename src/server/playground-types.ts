/**
 * What a server's playground is given: the actions behind its endpoints and
 * its options. Plain types (no Node types), so `ServerOptions` reads the same
 * to an embedder with or without @types/node.
 */

/** The endpoints the page calls: `POST /-/<action>` with a JSON object, answered with JSON. */
export const PLAY_ACTIONS = ['sources', 'resources', 'fields', 'values', 'query', 'explain', 'facet'] as const;
export type PlayAction = (typeof PLAY_ACTIONS)[number];

/** An endpoint's answer: its status and a JSON-able body. */
export interface PlayResult {
  readonly status: number;
  readonly body: unknown;
}

/** A download: its file name, media type, and its text as it is made. */
export interface PlayDownload {
  readonly filename: string;
  readonly type: string;
  readonly chunks: AsyncIterable<string>;
}

/** What the endpoints do; given by the layer that owns sources (the CLI). */
export interface PlaygroundActions {
  /** answers `POST /-/<action>`; `signal` aborts when the page goes away or cancels */
  call(action: PlayAction, input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<PlayResult>;
  /** answers `POST /-/download`: a result for a JSON error, or the file */
  download(input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<PlayResult | PlayDownload>;
}

export interface PlaygroundOptions {
  readonly actions: PlaygroundActions;
  /** host names besides IP addresses and `localhost` that the `Host` header may carry (e.g. the machine's name when listening beyond loopback) */
  readonly allowedHosts?: readonly string[];
  /** the built page (`index.html`, `play.js`, `play.css`); default `dist/web` of this package */
  readonly assets?: string;
}
