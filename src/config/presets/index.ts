/**
 * Presets: `preset: <name>` on a source is a documented config fragment for one vendor's API (url paths,
 * items_path, pagination, field mapping, status_map, scope rules), expanded under the source's own keys before the
 * config is validated: every key of the fragment can be overridden (objects merge key by key; lists and values are
 * replaced). `base_url` says where that tenant's API lives; presets of vendors with one API host have a default.
 * Each preset has a page under docs/sources/ naming the vendor documentation it follows.
 */

type Fragment = Record<string, unknown>;

/** The `preset_options` of a source (each preset takes the ones it names in `options`). */
export interface PresetOptions {
  /** bamboohr: `report` (a custom report, the default) or `directory` (the employee directory: a fallback). */
  endpoint?: 'report' | 'directory' | undefined;
  /** google-workspace: what an archived user (`archived: true`) becomes; default suspended. */
  archived?: 'active' | 'suspended' | 'left' | undefined;
}

/** One preset. */
export interface Preset {
  /** The vendor documentation the fragment follows. */
  docs: string[];
  /** The API host when the vendor has one for every tenant. */
  defaultBaseUrl?: string;
  /** The `preset_options` keys this preset takes. */
  options?: (keyof PresetOptions)[];
  /** The fragment, for a base URL without a trailing slash. */
  fragment(base: string, options: PresetOptions): Fragment;
}

/** The user properties the Graph preset reads (members.url and members.delta ask for the same). */
const GRAPH_USER_FIELDS = 'id,displayName,mail,userPrincipalName,mobilePhone,businessPhones,jobTitle,department,accountEnabled,userType,employeeHireDate,employeeLeaveDateTime';

const SCIM_ENTERPRISE = '"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"';

/** The presets, by name. */
export const PRESETS = {
  'microsoft-graph': {
    docs: [
      'https://learn.microsoft.com/en-us/graph/api/user-list',
      'https://learn.microsoft.com/en-us/graph/paging',
      'https://learn.microsoft.com/en-us/graph/aad-advanced-queries',
      'https://learn.microsoft.com/en-us/graph/delta-query-users',
      'https://learn.microsoft.com/en-us/graph/api/user-delta',
    ],
    defaultBaseUrl: 'https://graph.microsoft.com',
    fragment: (base) => ({
      type: 'hris-json',
      // $count=true (an advanced query, which needs ConsistencyLevel: eventual) makes Graph state @odata.count.
      headers: { ConsistencyLevel: 'eventual' },
      members: {
        // Graph returns only the properties $select names: the dates are asked for by name.
        url: `${base}/v1.0/users?$select=${GRAPH_USER_FIELDS}&$top=999&$count=true`,
        pagination: { type: 'odata' },
        // Steady-state runs read the changes since the last read (issue 31); the delta asks for the same fields.
        delta: { type: 'graph', url: `${base}/v1.0/users/delta?$select=${GRAPH_USER_FIELDS}` },
        fields: {
          id: 'id',
          display_name: 'displayName',
          email: ['mail', 'userPrincipalName'],
          phone: ['mobilePhone', 'businessPhones[0]'],
          title: 'jobTitle',
          department_path: 'department',
          status: 'accountEnabled',
          start_date: 'employeeHireDate',
          end_date: 'employeeLeaveDateTime',
        },
        status_map: { true: 'active', false: 'suspended' },
        require_status: 'keep accountEnabled in the $select of members.url (the app registration needs User.Read.All)',
        exclude: [{ field: 'userType', values: ['Guest'] }],
      },
    }),
  },
  scim: {
    docs: ['https://datatracker.ietf.org/doc/html/rfc7644#section-3.4.2', 'https://datatracker.ietf.org/doc/html/rfc7643#section-4.3'],
    fragment: (base) => ({
      type: 'hris-json',
      members: {
        url: `${base}/Users`,
        items_path: 'Resources',
        pagination: { type: 'scim', count: 100 },
        fields: {
          id: 'id',
          display_name: ['displayName', '{name.givenName} {name.familyName}', 'userName'],
          // userName is a fallback, taken only when it is an address (identity products that send emails without a value).
          email: ['emails[primary=true].value', 'emails[type=work].value', 'emails[0].value', 'userName'],
          phone: ['phoneNumbers[type=mobile].value', 'phoneNumbers[type=work].value', 'phoneNumbers[0].value'],
          title: 'title',
          department_path: `${SCIM_ENTERPRISE}.department`,
          status: 'active',
        },
        status_map: { true: 'active', false: 'suspended' },
        require_status: 'the SCIM server must send the active attribute (RFC 7643 4.1.1); if yours leaves it out of active users, set members.require_status: false',
      },
    }),
  },
  'google-workspace': {
    docs: ['https://developers.google.com/admin-sdk/directory/reference/rest/v1/users/list', 'https://developers.google.com/admin-sdk/directory/reference/rest/v1/users', 'https://developers.google.com/identity/protocols/oauth2/service-account'],
    defaultBaseUrl: 'https://admin.googleapis.com',
    options: ['archived'],
    fragment: (base, o) => ({
      type: 'hris-json',
      members: {
        url: `${base}/admin/directory/v1/users?customer=my_customer&maxResults=500&projection=basic&viewType=admin_view`,
        items_path: 'users',
        pagination: { type: 'cursor', cursor_path: 'nextPageToken', cursor_param: 'pageToken' },
        fields: {
          id: 'id',
          display_name: ['name.fullName', '{name.givenName} {name.familyName}'],
          email: 'primaryEmail',
          phone: ['phones[type=mobile].value', 'phones[type=work].value', 'phones[primary=true].value'],
          title: ['organizations[primary=true].title', 'organizations[0].title'],
          department_path: 'orgUnitPath',
          // suspended and archived together: an archived user (the licence many companies give leavers) is not active.
          status: '{suspended}/{archived}',
        },
        status_map: googleStatusMap(o.archived ?? 'suspended'),
        require_status: 'the admin the service account acts as (subject) must be allowed to read users with viewType=admin_view',
        path_separator: '/',
      },
    }),
  },
  bamboohr: {
    docs: [
      'https://documentation.bamboohr.com/reference/request-custom-report-1',
      'https://documentation.bamboohr.com/reference/get-employees-directory-1',
      'https://documentation.bamboohr.com/docs/getting-started',
      'https://documentation.bamboohr.com/reference/get-changed-employee-ids',
    ],
    options: ['endpoint'],
    fragment: (base, o) => ({
      type: 'hris-json',
      headers: { Accept: 'application/json' },
      members: o.endpoint === 'directory' ? bambooDirectory(base) : bambooReport(base),
    }),
  },
  personio: {
    docs: ['https://developer.personio.de/reference/get_company-employees', 'https://developer.personio.de/docs/pagination-adoption-guide-for-v1-get-employees-endpoint', 'https://developer.personio.de/reference/auth'],
    defaultBaseUrl: 'https://api.personio.de',
    fragment: (base) => ({
      type: 'hris-json',
      members: {
        url: `${base}/v1/company/employees`,
        items_path: 'data',
        total_path: 'metadata.total_elements',
        pagination: { type: 'offset', offset_param: 'offset', size_param: 'limit', size: 100 },
        fields: {
          id: 'attributes.id.value',
          display_name: '{attributes.first_name.value} {attributes.last_name.value}',
          email: 'attributes.email.value',
          title: 'attributes.position.value',
          department_path: 'attributes.department.value.attributes.name',
          status: 'attributes.status.value',
          start_date: 'attributes.hire_date.value',
          end_date: 'attributes.termination_date.value',
        },
        // onboarding: hired, not started; with a hire date ahead the dated lifecycle schedules them.
        status_map: { active: 'active', onboarding: 'active', leave: 'suspended', inactive: 'left' },
        require_status: 'the API credentials need the attribute status among their readable attributes (Settings > Integrations > API credentials)',
      },
    }),
  },
  hibob: {
    docs: ['https://apidocs.hibob.com/reference/post_people-search', 'https://apidocs.hibob.com/docs/people-read-api-contract', 'https://apidocs.hibob.com/reference/authorization'],
    defaultBaseUrl: 'https://api.hibob.com',
    fragment: (base) => ({
      type: 'hris-json',
      headers: { Accept: 'application/json' },
      members: {
        // POST /v1/people/search returns every matching employee in one response (no pagination); showInactive brings
        // leavers so they are seen leaving; humanReadable: APPEND keeps the machine values (dates as 2026-03-01) and
        // adds the names of list values (department, title) under humanReadable. Records come nested
        // ({"work": {"title": ...}}) or with flat path keys ({"/work/title": {"value": ...}}): both are read.
        url: `${base}/v1/people/search`,
        method: 'POST',
        body: {
          fields: ['root.id', 'root.displayName', 'root.firstName', 'root.surname', 'root.email', 'work.title', 'work.department', 'work.mobilePhone', 'work.startDate', 'internal.status', 'internal.terminationDate'],
          showInactive: true,
          humanReadable: 'APPEND',
        },
        items_path: 'employees',
        fields: {
          id: ['id', '"/root/id".value'],
          display_name: ['displayName', '"/root/displayName".value', '{firstName} {surname}', '{"/root/firstName".value} {"/root/surname".value}'],
          email: ['email', '"/root/email".value'],
          phone: ['work.mobilePhone', '"/work/mobilePhone".value'],
          title: ['humanReadable.work.title', '"/work/title".humanReadable', 'work.title', '"/work/title".value'],
          department_path: ['humanReadable.work.department', '"/work/department".humanReadable', 'work.department', '"/work/department".value'],
          status: ['internal.status', '"/internal/status".value'],
          start_date: ['work.startDate', '"/work/startDate".value'],
          end_date: ['internal.terminationDate', '"/internal/terminationDate".value'],
        },
        status_map: { Active: 'active', Inactive: 'left' },
        require_status: 'the service user needs read access to internal.status (its permission group in Bob: People\'s data, Internal, Status)',
      },
    }),
  },
  'workday-raas': {
    // Workday's own documentation (Reports-as-a-Service, web service enabled custom reports) is behind Workday Community's login.
    docs: ['Workday Community: Reports as a Service (RaaS), "Enable As Web Service" on a custom report; JSON with ?format=json'],
    fragment: (base) => ({
      type: 'hris-json',
      members: {
        url: `${base}${base.includes('?') ? '&' : '?'}format=json`,
        items_path: 'Report_Entry',
        // Column names are the report author's: each field lists the names published reports use, first non-empty wins.
        fields: {
          id: ['Employee_ID', 'Worker_ID', 'Employee_Id'],
          display_name: ['Preferred_Name', 'Full_Name', 'Legal_Name', 'Worker', '{First_Name} {Last_Name}'],
          email: ['Email_Address', 'Primary_Work_Email', 'Work_Email', 'Email'],
          phone: ['Mobile_Phone', 'Primary_Work_Phone', 'Work_Phone'],
          title: ['Business_Title', 'Job_Title'],
          department_path: ['Supervisory_Organization', 'Department', 'Team_Name'],
          status: ['Active_Status', 'Worker_Status', 'Employee_Status'],
          start_date: ['Hire_Date', 'Start_Date', 'Original_Hire_Date'],
          end_date: ['Termination_Date', 'End_Date'],
        },
        status_map: { '1': 'active', '0': 'left', true: 'active', false: 'left', Yes: 'active', No: 'left', Active: 'active', Terminated: 'left', Inactive: 'left', 'On Leave': 'suspended' },
        require_status: 'add a status column (Active_Status) to the report or map members.fields.status to yours; a report of active workers only can set members.require_status: false',
      },
    }),
  },
  'sap-successfactors': {
    docs: ['https://api.sap.com/api/PLTUserManagement/overview', 'https://www.odata.org/documentation/odata-version-2-0/json-format/'],
    fragment: (base) => ({
      type: 'hris-json',
      members: {
        // Without a status filter SuccessFactors returns active users only: ask for leavers too, so they are seen leaving.
        url: `${base}/odata/v2/User?$format=json&$inlinecount=allpages&$select=userId,firstName,lastName,displayName,email,cellPhone,businessPhone,title,department,status,hireDate&$filter=status in 't','f','T','F'`,
        items_path: 'd.results',
        pagination: { type: 'odata' },
        fields: {
          id: 'userId',
          display_name: ['displayName', '{firstName} {lastName}'],
          email: 'email',
          phone: ['cellPhone', 'businessPhone'],
          title: 'title',
          department_path: 'department',
          status: 'status',
          // Edm.DateTime as /Date(ms)/; the User entity has no end date (see docs/sources/sap-successfactors.md).
          start_date: 'hireDate',
        },
        status_map: { t: 'active', T: 'active', f: 'left', F: 'left' },
        require_status: 'keep status in the $select of members.url (the API user\'s permission role must let it read the User entity\'s status)',
      },
    }),
  },
} satisfies Record<string, Preset>;

/** Google's `{suspended}/{archived}` status: suspended wins; an archived user becomes `archived`. */
function googleStatusMap(archived: 'active' | 'suspended' | 'left'): Record<string, string> {
  const both = archived === 'active' ? 'suspended' : archived;
  return { 'false/false': 'active', 'true/false': 'suspended', 'false/true': archived, 'true/true': both, 'false/': 'active', 'true/': 'suspended' };
}

const BAMBOO_REPORT_FIELDS = ['id', 'firstName', 'lastName', 'displayName', 'workEmail', 'mobilePhone', 'workPhone', 'jobTitle', 'department', 'status', 'hireDate', 'terminationDate'];

/** The person fields BambooHR's report and its directory both name the same way (a fresh object per fragment). */
const bambooPersonFields = () => ({
  id: 'id',
  display_name: ['{firstName} {lastName}', 'displayName'],
  email: 'workEmail',
  phone: ['mobilePhone', 'workPhone'],
  title: 'jobTitle',
  department_path: 'department',
});

/** BambooHR's custom report: every employee (onlyCurrent=false: leavers and future hires too), with status and dates. */
function bambooReport(base: string): Fragment {
  return {
    url: `${base}/v1/reports/custom?format=JSON&onlyCurrent=false`,
    method: 'POST',
    body: { title: 'orgsync', fields: BAMBOO_REPORT_FIELDS },
    items_path: 'employees',
    fields: { ...bambooPersonFields(), status: 'status', start_date: 'hireDate', end_date: 'terminationDate' },
    status_map: { Active: 'active', Inactive: 'left' },
    require_status: 'the API key\'s user needs access to the employee status field (its BambooHR access level)',
    // Steady-state runs ask which employees changed since the last read, then read only those with this report.
    delta: { type: 'bamboohr', url: `${base}/v1/employees/changed` },
  };
}

/** BambooHR's employee directory: the fallback (current employees only, no status, no dates, fields chosen by the company). */
function bambooDirectory(base: string): Fragment {
  return {
    url: `${base}/v1/employees/directory`,
    items_path: 'employees',
    fields: bambooPersonFields(),
  };
}

/** A preset's name. */
export type PresetName = keyof typeof PRESETS;
/** Every preset name, for the schema. */
export const PRESET_NAMES = Object.keys(PRESETS) as [PresetName, ...PresetName[]];

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `over` on top of `base`: objects merge key by key, anything else (lists included) is replaced. */
export function mergeOver(base: unknown, over: unknown): unknown {
  if (!isPlain(base) || !isPlain(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeOver(base[k], v) : v;
  return out;
}

/**
 * Expands the `preset:` of each source (a raw, interpolated config value). A source without a preset, an unknown
 * preset, or a preset without a base URL is returned as it is: the schema then names the problem.
 */
export function expandPresets(sources: unknown): unknown {
  if (!Array.isArray(sources)) return sources;
  return sources.map((s) => {
    if (!isPlain(s) || typeof s.preset !== 'string' || !(s.preset in PRESETS)) return s;
    const preset: Preset = PRESETS[s.preset as PresetName];
    const base = typeof s.base_url === 'string' ? s.base_url : preset.defaultBaseUrl;
    // Without a base URL the schema names the missing key (type is known: presets are hris-json sources).
    if (base === undefined) return { type: 'hris-json', ...s };
    const options = (isPlain(s.preset_options) ? s.preset_options : {}) as PresetOptions;
    return mergeOver(preset.fragment(base.replace(/\/+$/, ''), options), s);
  });
}
