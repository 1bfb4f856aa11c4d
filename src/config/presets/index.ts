/**
 * Presets: `preset: <name>` on a source is a documented config fragment for one vendor's API (url paths,
 * items_path, pagination, field mapping, status_map, scope rules), expanded under the source's own keys before the
 * config is validated: every key of the fragment can be overridden (objects merge key by key; lists and values are
 * replaced). `base_url` says where that tenant's API lives; presets of vendors with one API host have a default.
 * Each preset has a page under docs/sources/ naming the vendor documentation it follows.
 */

type Fragment = Record<string, unknown>;

/** One preset. */
export interface Preset {
  /** The vendor documentation the fragment follows. */
  docs: string[];
  /** The API host when the vendor has one for every tenant. */
  defaultBaseUrl?: string;
  /** The fragment, for a base URL without a trailing slash. */
  fragment(base: string): Fragment;
}

const SCIM_ENTERPRISE = '"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"';

/** The presets, by name. */
export const PRESETS = {
  'microsoft-graph': {
    docs: ['https://learn.microsoft.com/en-us/graph/api/user-list', 'https://learn.microsoft.com/en-us/graph/paging', 'https://learn.microsoft.com/en-us/graph/aad-advanced-queries'],
    defaultBaseUrl: 'https://graph.microsoft.com',
    fragment: (base) => ({
      type: 'hris-json',
      // $count=true (an advanced query, which needs ConsistencyLevel: eventual) makes Graph state @odata.count.
      headers: { ConsistencyLevel: 'eventual' },
      members: {
        url: `${base}/v1.0/users?$select=id,displayName,mail,userPrincipalName,mobilePhone,businessPhones,jobTitle,department,accountEnabled,userType&$top=999&$count=true`,
        pagination: { type: 'odata' },
        fields: {
          id: 'id',
          display_name: 'displayName',
          email: ['mail', 'userPrincipalName'],
          phone: ['mobilePhone', 'businessPhones[0]'],
          title: 'jobTitle',
          department_path: 'department',
          status: 'accountEnabled',
        },
        status_map: { true: 'active', false: 'suspended' },
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
          email: ['emails[primary=true].value', 'emails[type=work].value', 'emails[0].value'],
          phone: ['phoneNumbers[type=mobile].value', 'phoneNumbers[type=work].value', 'phoneNumbers[0].value'],
          title: 'title',
          department_path: `${SCIM_ENTERPRISE}.department`,
          status: 'active',
        },
        status_map: { true: 'active', false: 'suspended' },
      },
    }),
  },
  'google-workspace': {
    docs: ['https://developers.google.com/admin-sdk/directory/reference/rest/v1/users/list', 'https://developers.google.com/admin-sdk/directory/reference/rest/v1/users', 'https://developers.google.com/identity/protocols/oauth2/service-account'],
    defaultBaseUrl: 'https://admin.googleapis.com',
    fragment: (base) => ({
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
          status: 'suspended',
        },
        status_map: { true: 'suspended', false: 'active' },
        path_separator: '/',
      },
    }),
  },
  bamboohr: {
    docs: ['https://documentation.bamboohr.com/reference/get-employees-directory-1', 'https://documentation.bamboohr.com/docs/getting-started'],
    fragment: (base) => ({
      type: 'hris-json',
      headers: { Accept: 'application/json' },
      members: {
        url: `${base}/v1/employees/directory`,
        items_path: 'employees',
        fields: {
          id: 'id',
          display_name: ['{firstName} {lastName}', 'displayName'],
          email: 'workEmail',
          phone: ['mobilePhone', 'workPhone'],
          title: 'jobTitle',
          department_path: 'department',
        },
      },
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
        },
        status_map: { active: 'active', onboarding: 'active', leave: 'suspended', inactive: 'left' },
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
        // leavers so they are seen leaving; humanReadable: REPLACE gives list values (department, title) as names.
        url: `${base}/v1/people/search`,
        method: 'POST',
        body: {
          fields: ['root.id', 'root.displayName', 'root.firstName', 'root.surname', 'root.email', 'work.title', 'work.department', 'work.mobilePhone', 'internal.status'],
          showInactive: true,
          humanReadable: 'REPLACE',
        },
        items_path: 'employees',
        fields: {
          id: 'id',
          display_name: ['displayName', '{firstName} {surname}'],
          email: 'email',
          phone: 'work.mobilePhone',
          title: 'work.title',
          department_path: 'work.department',
          status: 'internal.status',
        },
        status_map: { Active: 'active', Inactive: 'left' },
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
        fields: {
          id: 'Employee_ID',
          display_name: ['Preferred_Name', 'Legal_Name', '{First_Name} {Last_Name}'],
          email: ['Email_Address', 'Primary_Work_Email'],
          phone: ['Mobile_Phone', 'Primary_Work_Phone'],
          title: ['Business_Title', 'Job_Title'],
          department_path: 'Supervisory_Organization',
          status: 'Active_Status',
        },
        status_map: { '1': 'active', '0': 'left', true: 'active', false: 'left', Yes: 'active', No: 'left' },
      },
    }),
  },
  'sap-successfactors': {
    docs: ['https://api.sap.com/api/PLTUserManagement/overview', 'https://www.odata.org/documentation/odata-version-2-0/json-format/'],
    fragment: (base) => ({
      type: 'hris-json',
      members: {
        // Without a status filter SuccessFactors returns active users only: ask for leavers too, so they are seen leaving.
        url: `${base}/odata/v2/User?$format=json&$inlinecount=allpages&$select=userId,firstName,lastName,displayName,email,cellPhone,businessPhone,title,department,status&$filter=status in 't','f','T','F'`,
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
        },
        status_map: { t: 'active', T: 'active', f: 'left', F: 'left' },
      },
    }),
  },
} satisfies Record<string, Preset>;

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
    return mergeOver(preset.fragment(base.replace(/\/+$/, '')), s);
  });
}
