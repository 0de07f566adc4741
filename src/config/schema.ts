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
    url: httpUrl,
    language: z
      .string({ error: 'must be text' })
      .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, { error: 'must be a language segment such as en or de' })
      .optional(),
    method: z
      .preprocess((value) => (typeof value === 'string' ? value.toUpperCase() : value), z.enum(['POST', 'GET']))
      .optional(),
    /** seconds a request may take */
    timeout: z.number({ error: 'must be a number of seconds' }).positive({ error: 'must be a number of seconds above 0' }).optional(),
    token_env: nonEmptyText.optional(),
    token_file: nonEmptyText.optional(),
    token_cmd: nonEmptyText.optional(),
    token: nonEmptyText.optional(),
    /** resource ids or aliases to offer in completion and `ckql resources` */
    resources: z.array(nonEmptyText, { error: 'must be a list of resource ids' }).optional(),
    /** the portal's dialect (docs/beyond-the-request.md); detected when absent */
    target: z.enum(['ckan-2.11', 'ckan-2.12', 'sql'], { error: 'must be ckan-2.11, ckan-2.12 or sql' }).optional(),
    /** the most records a plan may read to finish a query locally */
    max_scan: z.number({ error: 'must be a number of records' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional(),
    /** the header the portal reads the token from (CKAN's `apitoken_header_name`); default Authorization */
    token_header: nonEmptyText.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'must be an HTTP header name such as X-CKAN-API-Key' }).optional(),
    /** the User-Agent sent (some portals' firewalls refuse unknown ones) */
    user_agent: nonEmptyText.optional(),
    /** requests in flight to the portal at once; default 3 */
    max_in_flight: z.number({ error: 'must be a number of requests' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be 1 or more' }).max(32, { error: 'must be 32 or fewer' }).optional(),
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
      .optional(),
    /** who answers (docs/engines.md) */
    engine: z.enum(['memory', 'pglite', 'postgres'], { error: 'must be memory, pglite or postgres' }).optional(),
    /** a PostgreSQL datastore (postgres://…), or a directory keeping a PGlite database */
    db: nonEmptyText.optional(),
    /** the CKAN the data is served as (docs/beyond-the-request.md); `sql` needs pglite or postgres */
    target: z.enum(['ckan-2.11', 'ckan-2.12', 'sql'], { error: 'must be ckan-2.11, ckan-2.12 or sql' }).optional(),
    /** the most records a plan may read to finish a query locally */
    max_scan: z.number({ error: 'must be a number of records' }).int({ error: 'must be a whole number' }).positive({ error: 'must be above 0' }).optional(),
    /** how columns no fields file declares are typed (engine/declared.ts) */
    infer: z.enum(['ckql', 'xloader', 'datapusher'], { error: 'must be ckql, xloader or datapusher' }).optional(),
  })
  .refine((profile) => profile.data !== undefined || profile.db !== undefined, { error: 'give data (files) or db (a database)' });

const paramDefault = z.union([scalar, z.array(scalar)], {
  error: 'must be a text, a number, true, false, null, or a list of them',
});

export const namedQuerySchema = z.strictObject({
  query: nonEmptyText,
  /** defaults; a list binds `field in $name` */
  params: z.record(z.string(), paramDefault, { error: 'must map parameter names to values' }).optional(),
  description: z.string({ error: 'must be text' }).optional(),
  /** the profile this query runs on when the command line names none */
  profile: nonEmptyText.optional(),
});

export const configSchema = z.strictObject({
  default: nonEmptyText.optional(),
  profiles: z.record(z.string(), z.unknown(), { error: 'must map profile names to profiles' }).optional(),
  queries: z.record(z.string(), z.unknown(), { error: 'must map query names to queries' }).optional(),
});

export type UrlProfileInput = z.infer<typeof urlProfileSchema>;
export type DataProfileInput = z.infer<typeof dataProfileSchema>;
export type NamedQueryInput = z.infer<typeof namedQuerySchema>;
