import { z } from 'zod';
import { parsePath, PathSyntaxError } from '../shared/field-path.js';
import { namesOfSpec } from '../shared/field-spec.js';
import { durationSchema } from './platform.js';
import { httpUrlSchema, insecureTransportSchema } from './transport.js';
import { PRESET_NAMES, PRESETS, type Preset } from './presets/index.js';

/**
 * `sources:` — where HR truth comes from. One entry per source, a discriminated union on `type`
 * (`csv`, `hris-json`, `ldap`). Sources are merged per entity by source id; for each field the first source in
 * config order that has a value wins, unless a source lists the field in `authoritative_fields`.
 */

/**
 * How a field is read from a record: an attribute / column / dotted JSON path (`department.id`), a template with
 * `{name}` placeholders (`"{givenName} {sn}"`), or a list of those where the first non-empty value wins
 * (`[telephoneNumber, mobile]`).
 */
export const fieldSpecSchema = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .describe('An attribute, column or dotted path; a template such as "{givenName} {sn}"; or a list of those (first non-empty wins).');

/** A mapped field spec. */
export type FieldSpec = z.infer<typeof fieldSpecSchema>;

const memberStatusSchema = z.enum(['active', 'suspended', 'left']);

/** `status_map`: a source's status value -> active | suspended | left. */
export const statusMapSchema = z
  .record(z.string(), memberStatusSchema)
  .describe('Maps the source\'s status values to active, suspended or left (e.g. {Terminated: left, "On Leave": suspended}). Values already equal to active/suspended/left need no entry.');

/** Department fields. */
export const departmentFieldsSchema = z
  .strictObject({
    id: fieldSpecSchema.describe('The department\'s source id (becomes third_department_id).'),
    name: fieldSpecSchema.describe('The department\'s name.'),
    parent: fieldSpecSchema.optional().describe('The parent department\'s source id; empty means top level.'),
    sort_order: fieldSpecSchema.optional().describe('An integer sort order.'),
  })
  .describe('How department fields are read.');

/** Position fields. */
export const positionFieldsSchema = z
  .strictObject({
    id: fieldSpecSchema.describe('The position\'s source id (becomes third_position_id).'),
    name: fieldSpecSchema.describe('The position\'s name.'),
    description: fieldSpecSchema.optional().describe('A description.'),
    sort_order: fieldSpecSchema.optional().describe('An integer sort order.'),
  })
  .describe('How position fields are read.');

/** Member fields. */
export const memberFieldsSchema = z
  .strictObject({
    id: fieldSpecSchema.describe('The member\'s source id (becomes third_user_id).'),
    display_name: fieldSpecSchema.describe('The display name, e.g. "{first_name} {last_name}".'),
    email: fieldSpecSchema.optional().describe('E-mail; trimmed and lower-cased.'),
    phone: fieldSpecSchema.optional().describe('Phone; converted to E.164 using the source\'s phone_region for national numbers.'),
    title: fieldSpecSchema.optional().describe('Job title.'),
    department: fieldSpecSchema.optional().describe('The source id of the member\'s department.'),
    department_path: fieldSpecSchema
      .optional()
      .describe('A department path such as "Engineering/Platform/SRE": the departments are derived from it (id = the path, name = its last part, parent = the path above) and the member is placed in the last one.'),
    department_name: fieldSpecSchema
      .optional()
      .describe('The name of the member\'s department when department is its code (an id that stays when the name changes): the departments are derived from the members (id = department, name = this, top level), as department_path does for paths.'),
    position: fieldSpecSchema.optional().describe('The source id (code) of the member\'s position, e.g. a job code; with position_name the positions are derived from the members.'),
    position_name: fieldSpecSchema.optional().describe('The name of the member\'s position (with position: id = position, name = this).'),
    status: fieldSpecSchema.optional().describe('The status value, translated by status_map; when unmapped every member is active.'),
    start_date: fieldSpecSchema
      .optional()
      .describe('The first working day: an ISO date (2026-03-01) or date-time, or OData v2 /Date(ms)/, read in timezone: when it has no offset; empty and 0000-00-00 are no date. With sync.lifecycle, a member is created create_days_before_start days before it.'),
    end_date: fieldSpecSchema
      .optional()
      .describe('The last day: an ISO date or date-time, or OData v2 /Date(ms)/, read in timezone:; empty and 0000-00-00 are no date. From the start of that day (midnight in timezone:) or that instant the member is removed or suspended (sync.lifecycle.end_action), even while the export still says active.'),
  })
  .describe('How member fields are read.');

/** A name needs its code (issue 45): `department_name` beside `department`, `position` and `position_name` together. */
export function memberFieldPairs(fields: { department?: unknown; department_name?: unknown; position?: unknown; position_name?: unknown }, ctx: z.RefinementCtx): void {
  if (fields.department_name !== undefined && fields.department === undefined) {
    ctx.addIssue({ code: 'custom', message: 'department_name names the department whose code is in department: map department too (the code is the id that stays when the name changes)', path: ['fields', 'department_name'] });
  }
  if ((fields.position === undefined) !== (fields.position_name === undefined)) {
    const [given, missing] = fields.position === undefined ? ['position_name', 'position'] : ['position', 'position_name'];
    ctx.addIssue({ code: 'custom', message: `${given} needs ${missing}: positions are derived from the members' position (the id) and position_name (the name)`, path: ['fields', given] });
  }
}

/** One include/exclude rule. */
export const scopeRuleSchema = z
  .strictObject({
    field: z.string().min(1).describe('The raw name to test: a CSV column, an LDAP attribute or a JSON field path (not a mapped field), e.g. employment_type.'),
    values: z.array(z.string()).min(1).optional().describe('The rule matches when the value is one of these (exact, after trimming).'),
    pattern: z
      .string()
      .min(1)
      .optional()
      .refine(
        (p) => {
          try {
            new RegExp(p!, 'u');
            return true;
          } catch {
            return false;
          }
        },
        { message: 'not a valid regular expression' },
      )
      .describe('The rule matches when this regular expression matches the whole value (e.g. "CONT-.*").'),
  })
  .refine((r) => (r.values === undefined) !== (r.pattern === undefined), { message: 'give either values or pattern' })
  .describe('Matches a record by one raw field: a list of values or a regular expression.');

/** include / exclude of one entity. */
const scopeOptions = {
  include: z.array(scopeRuleSchema).optional().describe('Take only records that match at least one of these rules (applied before validation; counted in sources check).'),
  exclude: z.array(scopeRuleSchema).optional().describe('Leave out records that match any of these rules, e.g. [{field: employment_type, values: [contractor]}] (applied before validation; counted in sources check).'),
};

const memberOptions = {
  status_map: statusMapSchema.optional(),
  path_separator: z.string().min(1).default('/').describe('Separator of department_path values.'),
};

const common = {
  name: z.string().min(1).regex(/^[A-Za-z0-9_.-]+$/, 'use letters, digits, "_", "-" or "."').describe('The source\'s name (in reports and record origins).'),
  phone_region: z
    .string()
    .regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 region such as US or DE')
    .optional()
    .describe('Default region for phone numbers written without a country code (ISO 3166-1 alpha-2, e.g. US). Without it such numbers are invalid.'),
  phone_policy: z
    .enum(['drop', 'quarantine'])
    .default('drop')
    .describe('A member whose phone is invalid (no mapped phone field gives a valid number): drop the phone and keep the member (warning invalid_phone_dropped; a member then left with neither e-mail nor phone is quarantined as no_contact), or quarantine the member (invalid_phone).'),
  authoritative_fields: z
    .array(z.string().regex(/^(departments|positions|members)\.[a-z_]+$/, 'write entity.field, e.g. members.title'))
    .default([])
    .describe('Fields (entity.field, e.g. members.title) for which this source wins over sources listed before it.'),
};

/**
 * `full_read_interval` of a source read by delta (issue 31): a duration in the file (`24h`), ms in the loaded config.
 * A full read also runs on the first read, when the source's config or mapping changed, and on `sync --full-read`.
 */
export const fullReadIntervalSchema = durationSchema('expected a duration such as 24h, 12h or 7d')
  .prefault('24h')
  .describe('A source read by delta (members.delta, or the LDAP delta settings) is read in full again when its last full read is this old (e.g. 24h, 12h, 7d); it is also read in full on its first read, after its config or mapping changed, and on sync --full-read.');

// --- CSV ---------------------------------------------------------------------------------------------------------

const csvFileOptions = {
  file: z.string().min(1).describe('The CSV file; relative paths resolve against the config file\'s folder.'),
  encoding: z.string().min(1).optional().describe('Overrides the source\'s encoding for this file.'),
  skip_rows: z.number().int().min(0).optional().describe('Overrides the source\'s skip_rows for this file.'),
};

/** A CSV `type: csv` source. */
export const csvSourceSchema = z
  .strictObject({
    ...common,
    type: z.literal('csv'),
    delimiter: z
      .string()
      .min(1)
      .max(4)
      .default(',')
      .describe('Field delimiter, or auto: sniffed from the header line (comma, semicolon, tab or pipe, whichever occurs most outside quotes).'),
    skip_rows: z.number().int().min(0).default(0).describe('Lines to skip before the header (report titles, export dates); line numbers in messages still count them.'),
    comment: z.string().length(1).optional().describe('Lines starting with this character are comments and skipped (e.g. "#").'),
    quote: z.string().length(1).default('"').describe('Quote character.'),
    header: z.boolean().default(true).describe('The first row names the columns. Without a header, map columns by number ("1", "2", ...).'),
    encoding: z
      .string()
      .min(1)
      .default('utf-8')
      .describe('utf-8 (with or without BOM), utf-16le, gb18030, gbk, or another encoding iconv-lite knows.'),
    departments: z.strictObject({ ...csvFileOptions, ...scopeOptions, fields: departmentFieldsSchema }).optional().describe('The departments file.'),
    positions: z.strictObject({ ...csvFileOptions, ...scopeOptions, fields: positionFieldsSchema }).optional().describe('The positions file.'),
    members: z
      .strictObject({ ...csvFileOptions, ...scopeOptions, ...memberOptions, fields: memberFieldsSchema })
      .superRefine((m, ctx) => memberFieldPairs(m.fields, ctx))
      .optional()
      .describe('The members file.'),
  })
  .describe('CSV files, one per entity; read streaming.');

// --- HRIS JSON ---------------------------------------------------------------------------------------------------

/** A field path in JSON (the grammar of docs/sources/field-paths.md): checked when the config is loaded. */
const jsonPathSchema = (what: string) =>
  z
    .string()
    .superRefine((v, ctx) => {
      try {
        parsePath(v);
      } catch (err) {
        if (err instanceof PathSyntaxError) ctx.addIssue({ code: 'custom', message: err.message });
        else throw err;
      }
    })
    .describe(what);

/** HRIS JSON pagination. */
export const paginationSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('none') }),
    z.strictObject({
      type: z.literal('next-link'),
      next_path: jsonPathSchema('Path in the response to the next page\'s URL (absolute or relative); empty or absent ends the walk.').pipe(z.string().min(1)),
      end_on_empty: z.boolean().default(true).describe('A page with no records ends the walk (said in the log at debug), even when it links a next page; false: only an empty link or cursor does (an API that sends empty pages in the middle). A 204 No Content or an empty body always ends it.'),
    }),
    z.strictObject({
      type: z.literal('cursor'),
      cursor_path: jsonPathSchema('Path in the response to the next cursor (Google: nextPageToken); empty or absent ends the walk; a cursor that comes back fails the read.').pipe(z.string().min(1)),
      cursor_param: z.string().min(1).describe('Query parameter that carries the cursor (Google: pageToken).'),
      size_param: z.string().min(1).optional().describe('Query parameter for the page size.'),
      size: z.number().int().min(1).optional().describe('Page size to ask for.'),
      end_on_empty: z.boolean().default(true).describe('A page with no records ends the walk (said in the log at debug), even when it links a next page; false: only an empty link or cursor does (an API that sends empty pages in the middle). A 204 No Content or an empty body always ends it.'),
    }),
    z.strictObject({
      type: z.literal('page'),
      page_param: z.string().min(1).default('page').describe('Query parameter for the page number.'),
      size_param: z.string().min(1).optional().describe('Query parameter for the page size.'),
      size: z.number().int().min(1).default(100).describe('Page size; a page with fewer items is the last.'),
      start: z.number().int().min(0).default(1).describe('Number of the first page.'),
    }),
    z.strictObject({
      type: z.literal('offset'),
      offset_param: z.string().min(1).default('offset').describe('Query parameter for the index of the first record.'),
      size_param: z.string().min(1).default('limit').describe('Query parameter for the page size.'),
      size: z.number().int().min(1).default(100).describe('Page size; a page with fewer items is the last.'),
      start: z.number().int().min(0).default(0).describe('Offset of the first page.'),
    }),
    z.strictObject({
      type: z.literal('scim'),
      count: z.number().int().min(1).default(100).describe('Records to ask for per page (the count parameter).'),
      start_index_param: z.string().min(1).default('startIndex').describe('Query parameter for the 1-based index of the first record.'),
      count_param: z.string().min(1).default('count').describe('Query parameter for the page size.'),
    }),
    z.strictObject({
      type: z.literal('odata'),
      end_on_empty: z.boolean().default(true).describe('A page with no records ends the walk (said in the log at debug), even when it links a next page; false: only an empty link or cursor does (an API that sends empty pages in the middle). A 204 No Content or an empty body always ends it.'),
    }),
  ])
  .describe('How to walk the pages of a URL: none, next-link, cursor, page (page number), offset (record offset), scim (startIndex/count/totalResults) or odata (@odata.nextLink or d.__next).');

/** `auth:` of an HTTP source. Secrets come from the environment (`${VAR}`) or a file (`token_file`, `password_file`, `client_secret_file`). */
export const httpAuthSchema = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('bearer'),
      token: z.string().min(1).describe('The bearer token: "${HRIS_TOKEN}" or token_file.'),
    }),
    z.strictObject({
      type: z.literal('basic'),
      username: z.string().min(1).describe('The user name (Workday: ISU@tenant; BambooHR: the API key; HiBob: the service user id).'),
      password: z.string().describe('The password: "${VAR}" or password_file (BambooHR: any text, e.g. "x").'),
    }),
    z.strictObject({
      type: z.literal('oauth2-client-credentials'),
      token_url: httpUrlSchema().describe('The token endpoint (e.g. https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token).'),
      client_id: z.string().min(1).describe('The client id.'),
      client_secret: z.string().min(1).describe('The client secret: "${VAR}" or client_secret_file.'),
      scope: z.string().min(1).optional().describe('The scope parameter (Graph: https://graph.microsoft.com/.default).'),
      audience: z.string().min(1).optional().describe('The audience parameter, for token servers that want one.'),
      extra_params: z.record(z.string(), z.string()).default({}).describe('More form parameters for the token request.'),
      client_auth: z.enum(['post', 'basic']).default('post').describe('How the client authenticates: post (client_secret in the form body) or basic (HTTP Basic).'),
    }),
    z.strictObject({
      type: z.literal('google-service-account'),
      key_file: z.string().min(1).describe('The service account\'s JSON key file (client_email, private_key, token_uri); relative to the config file.'),
      subject: z.string().min(1).describe('The user to act as (domain-wide delegation), e.g. an admin\'s e-mail.'),
      scopes: z.array(z.string().min(1)).min(1).describe('OAuth scopes, e.g. [https://www.googleapis.com/auth/admin.directory.user.readonly].'),
    }),
  ])
  .describe('How requests authenticate: bearer, basic, oauth2-client-credentials or google-service-account. Tokens are cached until shortly before they expire and fetched again on expiry or on one 401; they are never logged.');

/** HRIS auth. */
export type HttpAuthConfig = z.infer<typeof httpAuthSchema>;

const hrisEntity = {
  url: httpUrlSchema().optional().describe('HTTP(S) address of the first page (give url or file).'),
  method: z.enum(['GET', 'POST']).default('GET').describe('GET, or POST for search endpoints that take a JSON body (HiBob\'s people search).'),
  body: z.record(z.string(), z.unknown()).optional().describe('The JSON body of a POST (sent with every page).'),
  file: z.string().min(1).optional().describe('A JSON file instead of a URL; relative to the config file.'),
  items_path: jsonPathSchema('Path to the array of records in each response; empty: the response is the array (scim: Resources; odata: value or d.results).').default(''),
  total_path: jsonPathSchema('Path to the total number of records the source states (any page; the last one read counts); fewer records than that fails the read.').optional(),
  total_header: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'an HTTP header name such as X-Total-Count')
    .optional()
    .describe('A response header that states the total number of records (X-Total-Count); like total_path, fewer records than that fails the read.'),
  pagination: paginationSchema.default({ type: 'none' }),
  ...scopeOptions,
};

const hrisFieldPaths = (fields: Record<string, unknown>, ctx: z.RefinementCtx) => {
  for (const [field, spec] of Object.entries(fields)) {
    for (const item of Array.isArray(spec) ? spec : spec === undefined ? [] : [spec]) {
      const names = typeof item === 'string' ? namesOfSpec(item) : [];
      for (const n of names) {
        try {
          parsePath(n);
        } catch (err) {
          if (err instanceof PathSyntaxError) ctx.addIssue({ code: 'custom', message: err.message, path: ['fields', field] });
          else throw err;
        }
      }
    }
  }
};

/** `members.require_status` of an hris-json source. */
const requireStatusSchema = z
  .union([z.boolean(), z.string().min(1)])
  .optional()
  .describe('A member record without a status value is quarantined (missing_status) instead of taken as active; a text says what to grant so the source sends the field (the presets set it). false: a missing status means active.');

/**
 * `members.delta` of an hris-json source (issue 31): how the source says what changed since the last read, so a
 * steady-state run reads the changes instead of the directory (the presets of Microsoft Graph and BambooHR set it).
 */
export const hrisDeltaSchema = z
  .union([
    z.literal(false),
    z.strictObject({
      type: z.literal('graph'),
      url: z
        .url({ protocol: /^https?$/ })
        .describe('The delta function of the collection with the same $select as members.url, e.g. https://graph.microsoft.com/v1.0/users/delta?$select=id,displayName,...; its @odata.deltaLink is kept in the state DB.'),
      key: jsonPathSchema('Path to the record\'s stable key in each item (Graph: id).').pipe(z.string().min(1)).default('id'),
    }),
    z.strictObject({
      type: z.literal('bamboohr'),
      url: z
        .url({ protocol: /^https?$/ })
        .describe('The changed-employees endpoint, e.g. https://api.bamboohr.com/api/gateway.php/acme/v1/employees/changed; since= is added. Changed employees are then read with members.url and body filtered to their ids.'),
      key: jsonPathSchema('Path to the record\'s stable key in each item (BambooHR: id).').pipe(z.string().min(1)).default('id'),
      overlap: durationSchema('expected a duration such as 5m or 10m')
        .prefault('5m')
        .describe('The watermark is the time the read began (the server\'s Date header) minus this, so a change made during a read is read again next time.'),
      batch_size: z.number().int().min(1).max(1000).default(200).describe('Changed employees read per report request (filters.employeeIds).'),
    }),
  ])
  .optional()
  .describe('Read by delta: graph (Microsoft Graph /users/delta: @odata.deltaLink, @removed) or bamboohr (/v1/employees/changed?since=, then the changed employees). false: always read in full. A full read still runs every full_read_interval, after a config or mapping change and on sync --full-read.');

/** `members.delta` of an hris-json source. */
export type HrisDeltaConfig = Exclude<z.infer<typeof hrisDeltaSchema>, false | undefined>;

/** `preset_options`: the choices a preset leaves open. */
const presetOptionsSchema = z
  .strictObject({
    endpoint: z
      .enum(['report', 'directory'])
      .optional()
      .describe('bamboohr: report (a custom report with status and dates, the default) or directory (the employee directory: current employees only, no status, no dates).'),
    archived: z
      .enum(['active', 'suspended', 'left'])
      .optional()
      .describe('google-workspace: what a user with archived: true becomes (default suspended).'),
  })
  .optional()
  .describe('Options of the preset (each preset\'s page lists the ones it takes).');

const oneOfUrlFile = (v: { url?: string | undefined; file?: string | undefined }) => (v.url === undefined) !== (v.file === undefined);
const urlFileMessage = { message: 'give either url or file' };

const withPaths = <T extends z.ZodType<{ fields: Record<string, unknown>; include?: { field: string }[] | undefined; exclude?: { field: string }[] | undefined }>>(schema: T) =>
  schema.superRefine((v, ctx) => {
    hrisFieldPaths(v.fields, ctx);
    for (const key of ['include', 'exclude'] as const) {
      (v[key] ?? []).forEach((rule, i) => {
        try {
          parsePath(rule.field);
        } catch (err) {
          if (err instanceof PathSyntaxError) ctx.addIssue({ code: 'custom', message: err.message, path: [key, i, 'field'] });
          else throw err;
        }
      });
    }
  });

/** A `type: hris-json` source. */
export const hrisJsonSourceSchema = z
  .strictObject({
    ...common,
    type: z.literal('hris-json'),
    preset: z
      .enum(PRESET_NAMES)
      .optional()
      .describe('A vendor preset (docs/sources/<preset>.md) that fills url, items_path, pagination, fields, status_map and scope; every key can be overridden. type: hris-json may be left out.'),
    base_url: httpUrlSchema().optional().describe('With a preset: where this tenant\'s API lives (e.g. https://acme.okta.com/scim/v2); presets of single-host vendors have a default.'),
    headers: z.record(z.string(), z.string()).default({}).describe('HTTP headers sent with every request of this source (e.g. X-Tenant: acme); Authorization and other credential headers only to the source\'s own origin.'),
    auth: httpAuthSchema.optional(),
    ca_file: z
      .string()
      .min(1)
      .optional()
      .describe("PEM file of the CA that signed the API's certificate (an internal CA, a TLS-inspecting proxy), trusted instead of the system's CAs for the source's own requests (not a token URL); the certificate is always verified."),
    allow_insecure_transport: insecureTransportSchema,
    allowed_origins: z
      .array(httpUrlSchema().transform((u) => new URL(u).origin))
      .default([])
      .describe('Other origins (https://host:port) that next links and redirects may lead to; without it they are refused. Credentials are never sent to them.'),
    timeout_ms: z.number().int().min(100).default(30_000).describe('Per-request timeout.'),
    max_attempts: z.number().int().min(1).max(10).default(3).describe('Attempts per page for 429, 5xx and network errors.'),
    max_pages: z.number().int().min(1).default(10_000).describe('A walk with more pages than this fails (a pagination loop).'),
    departments: withPaths(z.strictObject({ ...hrisEntity, fields: departmentFieldsSchema })).refine(oneOfUrlFile, urlFileMessage).optional(),
    positions: withPaths(z.strictObject({ ...hrisEntity, fields: positionFieldsSchema })).refine(oneOfUrlFile, urlFileMessage).optional(),
    members: withPaths(z.strictObject({ ...hrisEntity, ...memberOptions, require_status: requireStatusSchema, delta: hrisDeltaSchema, fields: memberFieldsSchema }))
      .refine(oneOfUrlFile, urlFileMessage)
      .refine((m) => m.delta === undefined || m.delta === false || m.url !== undefined, { message: 'delta needs members.url (a file is read in full)', path: ['delta'] })
      .superRefine((m, ctx) => memberFieldPairs(m.fields, ctx))
      .optional(),
    preset_options: presetOptionsSchema,
    full_read_interval: fullReadIntervalSchema,
  })
  .superRefine((v, ctx) => {
    if (v.preset !== undefined && v.base_url === undefined && !('defaultBaseUrl' in PRESETS[v.preset])) {
      ctx.addIssue({ code: 'custom', message: `preset ${v.preset} needs base_url (where this tenant's API lives)`, path: ['base_url'] });
    }
    for (const key of Object.keys(v.preset_options ?? {})) {
      const takes: readonly string[] = v.preset === undefined ? [] : ((PRESETS[v.preset] as Preset).options ?? []);
      if (!takes.includes(key)) {
        const which = v.preset === undefined ? 'a source without a preset takes none' : takes.length ? `preset ${v.preset} takes ${takes.join(', ')}` : `preset ${v.preset} takes none`;
        ctx.addIssue({ code: 'custom', message: which, path: ['preset_options', key] });
      }
    }
  })
  .describe('An HRIS JSON API (or JSON files): fields mapped by field paths, or a vendor preset.');

// --- LDAP --------------------------------------------------------------------------------------------------------

const ldapSearch = {
  ...scopeOptions,
  base_dn: z.string().min(1).optional().describe('Search base; default: the source\'s base_dn.'),
  filter: z.string().min(1).optional().describe('LDAP filter; default from the profile.'),
  scope: z.enum(['sub', 'one']).default('sub').describe('Search scope.'),
};

/** A `type: ldap` source. */
export const ldapSourceSchema = z
  .strictObject({
    ...common,
    type: z.literal('ldap'),
    profile: z
      .enum(['openldap', 'active-directory'])
      .default('openldap')
      .describe('Default mappings: openldap (inetOrgPerson, departments from the OU tree) or active-directory (objectGUID ids, department attribute, userAccountControl).'),
    url: z.string().regex(/^ldaps?:\/\/[^/]+\/?$/, 'an ldap:// or ldaps:// URL with host and port only').describe('Server, e.g. ldaps://ldap.example:636.'),
    start_tls: z.boolean().default(false).describe('Upgrade an ldap:// connection with StartTLS before binding.'),
    allow_insecure_transport: insecureTransportSchema,
    ca_file: z.string().min(1).optional().describe('PEM file of the CA that signed the server certificate (ldaps or StartTLS); the certificate is always verified.'),
    tls_server_name: z.string().min(1).optional().describe('Name to verify in the server certificate when it differs from the URL\'s host.'),
    bind_dn: z.string().min(1).optional().describe('DN for a simple bind; absent: anonymous.'),
    bind_password: z.string().optional().describe('Bind password; use ${ENV} or bind_password_file.'),
    base_dn: z.string().min(1).describe('Default search base.'),
    page_size: z.number().int().min(1).max(10_000).default(500).describe('Paged-search page size (Active Directory returns at most 1,000).'),
    time_limit_seconds: z.number().int().min(0).default(120).describe('Server time limit per search (0: none; Active Directory caps a search at 120 s).'),
    timeout_ms: z.number().int().min(100).default(300_000).describe('Client time limit for one operation (a page).'),
    connect_timeout_ms: z.number().int().min(100).default(10_000).describe('TCP/TLS connect timeout.'),
    delta: z
      .boolean()
      .default(true)
      .describe('Read members by delta between full reads: entries changed since the last read (uSNChanged on Active Directory, modifyTimestamp elsewhere) plus an id-only listing for deletes; false: read every member every run.'),
    full_read_interval: fullReadIntervalSchema,
    departments: z
      .union([
        z.literal(false),
        z.strictObject({
          ...ldapSearch,
          fields: departmentFieldsSchema.partial().default({}).describe('Overrides of the profile\'s department fields (parent defaults to the nearest department above in the DN).'),
        }),
      ])
      .optional()
      .describe('Departments from the OU tree (openldap default), or false. With active-directory, departments come from the members\' department attribute unless this is set.'),
    positions: z
      .strictObject({ ...ldapSearch, filter: z.string().min(1), fields: positionFieldsSchema })
      .optional()
      .describe('Positions from entries (no profile default).'),
    members: z
      .strictObject({
        ...ldapSearch,
        ...memberOptions,
        fields: memberFieldsSchema.partial().default({}).describe('Overrides of the profile\'s member fields; the pseudo-attribute "dn" is the entry\'s DN.'),
        department_from: z
          .enum(['dn', 'attribute'])
          .optional()
          .describe('dn: the nearest department above the member\'s DN (openldap default); attribute: fields.department or fields.department_path (active-directory default).'),
      })
      .default({ scope: 'sub', path_separator: '/', fields: {} })
      .describe('Member search and mapping.'),
  })
  .describe('An LDAP directory or Active Directory, read with paged searches.');

/** One source. */
export const sourceConfigSchema = z.discriminatedUnion('type', [csvSourceSchema, hrisJsonSourceSchema, ldapSourceSchema]);

/** `sources:` — where HR truth comes from. */
export const sourcesConfigSchema = z
  .array(sourceConfigSchema)
  .default([])
  .refine((list) => new Set(list.map((s) => s.name)).size === list.length, { message: 'source names must be unique' })
  .describe('HR sources, merged per entity by source id; for each field the first source (in this order) with a value wins.');

/** One configured source. */
export type SourceConfig = z.infer<typeof sourceConfigSchema>;
/** A CSV source. */
export type CsvSourceConfig = z.infer<typeof csvSourceSchema>;
/** An HRIS JSON source. */
export type HrisJsonSourceConfig = z.infer<typeof hrisJsonSourceSchema>;
/** An LDAP source. */
export type LdapSourceConfig = z.infer<typeof ldapSourceSchema>;
/** HRIS pagination. */
export type PaginationConfig = z.infer<typeof paginationSchema>;
