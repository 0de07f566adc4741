/** Calls to the server's playground endpoints: JSON in, JSON out, errors as `PlayError`. */
import type { ErrorAnswer } from '../../src/server/play-protocol.js';

/** An endpoint's refusal, with the span in the query when it is about the query. */
export class PlayError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly span: { readonly start: number; readonly end: number } | undefined;

  constructor(error: ErrorAnswer['error']) {
    super(error.message);
    this.code = error.code;
    this.hint = error.hint;
    this.span = error.span;
  }
}

/** `POST /-/<action>` with `input`; `signal` cancels it (the server stops the source's work too). */
export async function call<T>(action: string, input: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(`/-/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
    ...(signal === undefined ? {} : { signal }),
  });
  return read<T>(response);
}

async function read<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PlayError({ code: 'BAD_ANSWER', message: `the server answered ${response.status} with something that is not JSON` });
  }
  if (!response.ok) {
    const error = (body as Partial<ErrorAnswer>).error;
    throw new PlayError(error ?? { code: 'HTTP_ERROR', message: `the server answered ${response.status}` });
  }
  return body as T;
}

/** `POST /-/download`: the file as a blob and its name, or the server's refusal. */
export async function download(input: unknown, signal?: AbortSignal): Promise<{ blob: Blob; filename: string }> {
  const response = await fetch('/-/download', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
    ...(signal === undefined ? {} : { signal }),
  });
  if (!response.ok || (response.headers.get('content-type') ?? '').startsWith('application/json') && response.headers.get('content-disposition') === null) {
    await read(response);
    throw new PlayError({ code: 'HTTP_ERROR', message: `the server answered ${response.status}` });
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'records.txt';
  return { blob: await response.blob(), filename };
}
