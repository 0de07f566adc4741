/**
 * The shape of a ckql config file, checked with zod. Each profile and each
 * named query is checked on its own, so an error names the one entry that is
 * wrong (`profiles.prod.method`) instead of a union of every way it could
 * have been right.
 *
 * ```yaml
 * default: demo
 * profiles:
 *   demo: { data: ./data }
 *   portal: { url: https://data.example.org, language: en, token_env: PORTAL_TOKEN }
 * queries:
 *   active-math: |
 *     from courses
 *     where subject = $subject and stage = active   -- $subject defaults below
 *   by-stage: { query: "from courses where stage = $stage", params: { stage: active } }
 * ```
 */
import { z } from 'zod';

const nonEmptyText = z.string({ error: 'must be text' }).min(1, { error: 'must not be empty' });

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: 'must be a text, a number, true, false or null',
});

const httpUrl = nonEmptyText.refine(
  (text) => {
    try {
      const url = new URL(text);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  },
  { error: 'must be an http(s) URL such as https://data.example.org' },
);

/** The ways of giving a token; at most one per profile. */
export const tokenKeys = ['token_env', 'token_file', 'token_cmd', 'token'] as const;

export const urlProfileSchema = z
  .strictObject({
    url: httpUrl.describe('the portal\'s address, such as https://data.example.org'),
    language: z
      .string({ error: 'must be text' })
      .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, { error: 'must be a language segment such as en or de' })
      .optional()
      .describe('the language segment of the portal\'s URLs (/en/api/…)'),
    method: z
      .preprocess((value) => (typeof value === 'string' ? value.toUpperCase() : value), z.enum(['POST', 'GET']))
      .optional()
      .describe('how requests are sent (any case): POST (the default) or GET'),
    /** seconds a request may take */
    timeout: z.number({ error: 'must be a number of seconds' }).positive({ error: 'must be a number of seconds above 0' }).optional().describe('seconds a request may take'),
    token_env: nonEmptyText.optional().describe('the environment variable that holds the API token'),
    token_file: nonEmptyText.optional().describe('a file (readable by its owner only) that holds the API token'),
    token_cmd: nonEmptyText.optional().describe('a command that prints the API token'),
    token: nonEmptyText.optional().describe('the API token itself; only in a file others cannot read (chmod 600)'),
    /** resource ids or aliases to offer in completion and `ckql resources` */
    resources: z.array(nonEmptyText, { error: 'must be a list of resource ids' }).optional().describe('resource ids or aliases to offer in completion and ckql resources'),
    /** the portal's dialect (docs/beyond-the-request.md); detected when absent */
    target: z.enum(['ckan-2.11', 'ckan-2.12', 'sql'], { error: 'must be ckan-2.11, ckan-2.12 or sql' }).optional().describe('the CKAN dialect: ckan-2.11, ckan-2.12 or sql'),
    /** the most records a plan may read to finish a query locally */
    max_scan: z.number({ error: 'must be a number of records' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional().describe('the most records a plan may read to finish a query locally (default 100000)'),
    max_join_rows: z.number({ error: 'must be a number of rows' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional().describe('the most rows a join may give; one past it is refused before it runs (default 10000000)'),
    token_header: nonEmptyText
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'must be an HTTP header name such as X-CKAN-API-Key' })
      .optional()
      .describe("the header the portal reads the API token from (CKAN's apitoken_header_name; default Authorization), e.g. X-CKAN-API-Key"),
    user_agent: nonEmptyText.optional().describe('the User-Agent header sent (default ckql); some portals\' firewalls refuse unknown ones'),
    max_in_flight: z
      .number({ error: 'must be a number of requests' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be 1 or more' })
      .max(32, { error: 'must be 32 or fewer' })
      .optional()
      .describe('requests in flight to the portal at once (default 3)'),
  })
  .refine((profile) => tokenKeys.filter((key) => profile[key] !== undefined).length <= 1, {
    error: `give at most one of ${tokenKeys.join(', ')}`,
  });

export const dataProfileSchema = z
  .strictObject({
    data: z
      .union([nonEmptyText, z.array(nonEmptyText).min(1, { error: 'must name at least one path' })], {
        error: 'must be a path or a list of paths',
      })
      .optional()
      .describe('data files or folders (.csv, .json, .ndjson), relative to this file'),
    /** who answers (docs/engines.md) */
    engine: z.enum(['memory', 'pglite', 'postgres'], { error: 'must be memory, pglite or postgres' }).optional().describe('who answers: memory (the default), pglite or postgres'),
    /** a PostgreSQL datastore (postgres://…), or a directory keeping a PGlite database */
    db: nonEmptyText.optional().describe('a PostgreSQL datastore (postgres://…), or a directory keeping a PGlite database'),
    /** the CKAN the data is served as (docs/beyond-the-request.md); `sql` needs pglite or postgres */
    target: z.enum(['ckan-2.11', 'ckan-2.12', 'sql'], { error: 'must be ckan-2.11, ckan-2.12 or sql' }).optional().describe('the CKAN dialect: ckan-2.11, ckan-2.12 or sql'),
    /** the most records a plan may read to finish a query locally */
    max_scan: z.number({ error: 'must be a number of records' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional().describe('the most records a plan may read to finish a query locally (default 100000)'),
    max_join_rows: z.number({ error: 'must be a number of rows' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional().describe('the most rows a join may give; one past it is refused before it runs (default 10000000)'),
    infer: z
      .enum(['ckql', 'xloader', 'datapusher'], { error: 'must be ckql, xloader or datapusher' })
      .optional()
      .describe('how columns no fields file declares are typed: ckql (the default), xloader (all text) or datapusher'),
  })
  .refine((profile) => profile.data !== undefined || profile.db !== undefined, { error: 'give data (files) or db (a database)' });

const paramDefault = z.union([scalar, z.array(scalar)], {
  error: 'must be a text, a number, true, false, null, or a list of them',
});

export const namedQuerySchema = z.strictObject({
  query: nonEmptyText.describe('the query text; $name parameters take their defaults from params'),
  /** defaults; a list binds `field in $name` */
  params: z.record(z.string(), paramDefault, { error: 'must map parameter names to values' }).optional().describe('parameter defaults; a list binds field in $name'),
  description: z.string({ error: 'must be text' }).optional().describe('one line for .queries and ckql run --list'),
  /** the profile this query runs on when the command line names none */
  profile: nonEmptyText.optional().describe('the profile this query runs on when the command line names none'),
});

export const configSchema = z.strictObject({
  /** where an editor finds this schema (a JSON config's way to name it); ckql ignores it */
  $schema: z.string({ error: 'must be text' }).optional().describe("this file's JSON Schema, for editors; ckql ignores it"),
  default: nonEmptyText.optional(),
  profiles: z.record(z.string(), z.unknown(), { error: 'must map profile names to profiles' }).optional(),
  queries: z.record(z.string(), z.unknown(), { error: 'must map query names to queries' }).optional(),
});

export type UrlProfileInput = z.infer<typeof urlProfileSchema>;
export type DataProfileInput = z.infer<typeof dataProfileSchema>;
export type NamedQueryInput = z.infer<typeof namedQuerySchema>;

/**
 * The whole file in one schema, for editors (the JSON Schema); the loader
 * checks each profile and query on its own with the schemas above, so its
 * errors name the entry that is wrong.
 */
export const configFileSchema = configSchema.extend({
  default: nonEmptyText.optional().describe('the profile to use when the command line names none'),
  profiles: z
    .record(z.string(), z.union([urlProfileSchema, dataProfileSchema]), { error: 'must map profile names to profiles' })
    .optional()
    .describe('where queries go: a portal (url) or local data (data, db)'),
  queries: z
    .record(z.string(), z.union([nonEmptyText, namedQuerySchema]), { error: 'must map query names to queries' })
    .optional()
    .describe('named queries for ckql run, .run in the REPL and ckql check'),
});
