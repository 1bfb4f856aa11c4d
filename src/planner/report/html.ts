/**
 * The plan report (issue 20): one self-contained HTML file a person can review. No external asset and no network:
 * styles and the small filter script are inline, and a Content-Security-Policy forbids every fetch and admits only
 * those two inline blocks, by their SHA-256 (REPORT_CSP). Accessible markup:
 * headings, captions, column headers, labelled controls, and every colour paired with a word.
 */
import { createHash } from 'node:crypto';
import type { Change, Plan, PlanValue, QuarantineEntry } from '../../domain/index.js';
import { blockedRecords, CHANGE_OPS, ENTITY_KINDS } from '../../domain/index.js';
import { redactSecrets } from '../../shared/redact.js';
import { summaryLine } from '../render.js';
import { formatCount } from './accounting.js';
import { departmentTreeOf, memberChangeKind, MemberChangeCounts, subtreeChanges, type ReportDepartment, type TreeNode } from './tree.js';

/** What the report shows beside the plan. */
export interface PlanReportContext {
  /** Live departments when the plan was made (the tree); absent: only changed departments are shown. */
  departments?: readonly ReportDepartment[];
  /** account_id -> department id of members the plan suspends or removes. */
  memberDepartments?: Readonly<Record<string, string>>;
  quarantine?: readonly QuarantineEntry[];
  /** A pending approval holding this plan. */
  approval?: { digest: string; status: string };
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function show(v: PlanValue | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v === '' ? '""' : v;
  return JSON.stringify(v);
}

const MARK_WORD: Record<string, string> = { created: 'created', adopted: 'adopted', renamed: 'renamed', updated: 'updated', moved: 'moved', removed: 'removed' };

function treeItem(n: TreeNode): string {
  const badges = n.marks.map((m) => {
    const detail = m === 'moved' ? `: ${n.movedFrom} → ${n.movedTo}` : m === 'renamed' ? ` from “${n.renamedFrom}”` : '';
    return `<span class="badge ${m}" data-mark="${m}">${MARK_WORD[m]}${esc(detail)}</span>`;
  });
  const counts = (['create', 'update', 'suspend', 'remove'] as const).filter((k) => n.members[k] > 0).map((k) => `${n.members[k]} member ${k === 'create' ? 'create' : k === 'update' ? 'update' : k === 'suspend' ? 'suspension' : 'removal'}${n.members[k] === 1 ? '' : 's'}`);
  const children = n.children.length > 0 ? `<ul>${n.children.map(treeItem).join('')}</ul>` : '';
  return `<li data-dept="${esc(n.id)}" data-changed="${subtreeChanges(n) ? 'yes' : 'no'}" data-marks="${n.marks.join(' ')}"><span class="dept">${esc(n.name)}</span> ${badges.join(' ')}${counts.length ? ` <span class="counts">(${esc(counts.join(', '))})</span>` : ''}${children}</li>`;
}

interface Column<T> {
  head: string;
  cell(t: T): string;
}

/** Rows of one table the report lists unless `full`; the rest are counted under it (the JSON lists every change). */
export const HTML_ROWS_PER_TABLE = 200;

/** How the report is rendered. */
export interface PlanReportOptions {
  /** List every row (`plan --output html --full`); by default at most HTML_ROWS_PER_TABLE per table. */
  full?: boolean;
}

/**
 * One table: heading with the whole count, at most `limit` rows, and a line saying how many more there are. `total`:
 * the table's count when `rows` holds only its first rows.
 */
function* table<T>(id: string, caption: string, rows: readonly T[], cols: Column<T>[], kind: (t: T) => string, limit: number, total = rows.length): Generator<string> {
  if (total === 0) {
    yield `<section aria-labelledby="${id}-h"><h2 id="${id}-h">${esc(caption)} (0)</h2><p>None.</p></section>`;
    return;
  }
  const head = cols.map((c) => `<th scope="col">${esc(c.head)}</th>`).join('');
  yield `<section aria-labelledby="${id}-h"><h2 id="${id}-h">${esc(caption)} (${total})</h2>
<table id="${id}" class="filterable"><caption>${esc(caption)}</caption><thead><tr>${head}</tr></thead><tbody>
`;
  const shown = Math.min(rows.length, limit);
  let buf = '';
  for (let i = 0; i < shown; i++) {
    const r = rows[i]!;
    buf += `${i === 0 ? '' : '\n'}<tr class="row" data-kind="${esc(kind(r))}">${cols.map((c) => `<td>${esc(c.cell(r))}</td>`).join('')}</tr>`;
    if (buf.length >= 65_536) {
      yield buf;
      buf = '';
    }
  }
  const more = total - shown;
  const moreLine = more > 0 ? `<p class="more" id="${id}-more">… and ${formatCount(more)} more ${esc(caption.toLowerCase())} (the JSON output lists every change: <code>orgsync plan --output json</code>; <code>--full</code> lists every row here)</p>` : '';
  yield `${buf}
</tbody></table>${moreLine}</section>`;
}

const changeCols = (extra: Column<Change>[] = []): Column<Change>[] => [
  { head: 'Source id', cell: (c) => c.thirdId },
  { head: 'Platform id', cell: (c) => c.platformId ?? '' },
  { head: 'Change', cell: (c) => c.description },
  ...extra,
  { head: 'Reason', cell: (c) => c.reason },
];

const fieldDiff = (c: Change): string =>
  Object.keys(c.fields)
    .filter((k) => k !== 'metadata' || c.op === 'adopt')
    .map((k) => (c.before?.[k] === undefined ? `${k}: ${show(c.fields[k])}` : `${k}: ${show(c.before[k])} → ${show(c.fields[k])}`))
    .join('; ');

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
main{max-width:1200px;margin:0 auto;padding:1rem 1.5rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid #bbb;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#eee}
.badge{display:inline-block;border:1px solid;border-radius:3px;padding:0 .3rem;font-size:.85em}
.created{color:#0a5c1a}.adopted{color:#1d4f91}.renamed,.updated{color:#7a4a00}.moved{color:#5b2a86}.removed{color:#a0001c;text-decoration:line-through}
.refusal{border:2px solid #a0001c;padding:.5rem 1rem;background:#fff4f4}
.controls{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid #ddd}
.controls label{margin-right:.4rem}.controls input,.controls select{margin-right:1rem}
ul.tree,ul.tree ul{list-style:none;padding-left:1.2rem;border-left:1px dotted #999}
.only-changed li[data-changed="no"]{display:none}
`;

const SCRIPT = `
(function(){
  var q=document.getElementById('filter'),k=document.getElementById('kind'),t=document.getElementById('only-changed'),n=document.getElementById('shown');
  function apply(){
    var text=q.value.trim().toLowerCase(),kind=k.value,shown=0;
    document.querySelectorAll('table.filterable tbody tr').forEach(function(r){
      var ok=(!text||r.textContent.toLowerCase().indexOf(text)>=0)&&(!kind||r.getAttribute('data-kind')===kind);
      r.hidden=!ok;if(ok)shown++;
    });
    n.textContent=shown+' row(s) shown';
  }
  q.addEventListener('input',apply);k.addEventListener('change',apply);
  t.addEventListener('change',function(){document.getElementById('tree').classList.toggle('only-changed',t.checked)});
  apply();
})();
`;

/** The CSP source of an inline block: its SHA-256, base64 (CSP Level 2 hash sources). */
function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The report's Content-Security-Policy (issue 44): no fetch of any kind, and of inline code only the report's own
 * style sheet and filter script, allowed by their hashes: no 'unsafe-inline', so markup injected through a record's
 * field (escaped anyway) could never run or restyle the page.
 */
export const REPORT_CSP = `default-src 'none'; style-src ${hashSource(STYLE)}; script-src ${hashSource(SCRIPT)}; img-src data:; base-uri 'none'; form-action 'none'`;

/** Renders the report of `plan` as one HTML document (planHtmlChunks, joined). */
export function renderPlanHtml(plan: Plan, ctx: PlanReportContext = {}, options: PlanReportOptions = {}): string {
  let html = '';
  for (const chunk of planHtmlChunks(plan, ctx, options)) html += chunk;
  return html;
}

/** One table of changes: how many, and the first rows. */
interface ChangeTable {
  count: number;
  rows: Change[];
}

/** The tables of changes, in the order the report shows them. */
const CHANGE_TABLES = ['create', 'update', 'suspend', 'remove', 'other'] as const;

/**
 * What the report shows of a plan's changes, gathered change by change (a saved plan of a million changes streams
 * through `add`): each table's count and first rows, the department changes, and the member changes per department.
 */
export class PlanReportRows {
  /** Per table of CHANGE_TABLES: how many changes, and the first `limit` in plan order. */
  readonly tables: ChangeTable[] = CHANGE_TABLES.map(() => ({ count: 0, rows: [] }));
  /** Every department change (the tree applies them). */
  readonly departmentChanges: Change[] = [];
  readonly members: MemberChangeCounts;

  constructor(
    private readonly limit: number,
    memberDepartments?: Readonly<Record<string, string>>,
  ) {
    this.members = new MemberChangeCounts(memberDepartments);
  }

  /** Takes the next change in plan order. */
  add(c: Change): void {
    const t = this.tables[c.entity === 'members' ? CHANGE_TABLES.indexOf(memberChangeKind(c)) : CHANGE_TABLES.length - 1]!;
    if (t.count++ < this.limit) t.rows.push(c);
    if (c.entity === 'departments') this.departmentChanges.push(c);
    else if (c.entity === 'members') this.members.add(c);
  }
}

/** The rows a report lists unless `full`. */
export const reportRowLimit = (options: PlanReportOptions): number => (options.full ? Number.POSITIVE_INFINITY : HTML_ROWS_PER_TABLE);

/**
 * The report of `plan` in chunks: each table lists at most HTML_ROWS_PER_TABLE rows unless `full`, and with `full`
 * the rows stream, so a plan of a million changes never becomes one string.
 */
export function* planHtmlChunks(plan: Plan, ctx: PlanReportContext = {}, options: PlanReportOptions = {}): Generator<string> {
  const rows = new PlanReportRows(reportRowLimit(options), ctx.memberDepartments);
  for (const c of plan.changes) rows.add(c);
  yield* reportHtmlChunks(plan, rows, ctx, options);
}

/**
 * The report from rows gathered beforehand (PlanReportRows, with the same `full`): `plan` gives everything but the
 * rows of changes (its changes are only counted, in the summary line).
 */
export function* reportHtmlChunks(plan: Plan, rows: PlanReportRows, ctx: PlanReportContext = {}, options: PlanReportOptions = {}): Generator<string> {
  const limit = reportRowLimit(options);
  const blocked = blockedRecords(plan);
  const quarantine = ctx.quarantine ?? [];
  const tree = departmentTreeOf(rows.departmentChanges, rows.members, ctx.departments);
  const countRows = ENTITY_KINDS.map((e) => `<tr><th scope="row">${e}</th>${CHANGE_OPS.map((op) => `<td>${plan.counts[e][op]}</td>`).join('')}</tr>`).join('');
  const refusal = plan.refusal
    ? `<section class="refusal" role="alert" aria-labelledby="refusal-h"><h2 id="refusal-h">Refused by the ${esc(plan.refusal.guard)} guard</h2><p>${esc(plan.refusal.message)}</p><p>Nothing of this plan was applied.${
        ctx.approval ? ` It is saved as pending approval <code>${esc(ctx.approval.digest)}</code> (${esc(ctx.approval.status)}): list its digest under <code>sync.approve</code> or run <code>orgsync approvals approve ${esc(ctx.approval.digest)}</code> to apply exactly these changes.` : ''
      }</p></section>`
    : '';
  const kindOf = (c: Change) => (c.entity === 'members' ? memberChangeKind(c) : c.op === 'remove' ? 'remove' : c.op === 'create' ? 'create' : 'update');
  const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>orgsync plan: ${esc(plan.syncId)} ${esc(plan.createdAt)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>orgsync plan for sync <code>${esc(plan.syncId)}</code></h1>
<p>Made ${esc(plan.createdAt)} with policy <code>${esc(plan.policy)}</code>.${ctx.approval ? ` Approval digest <code>${esc(ctx.approval.digest)}</code> (${esc(ctx.approval.status)}).` : ''}</p>
${refusal}
<section aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>
<p id="summary-line">${esc(summaryLine(plan))}</p>
<table id="counts"><caption>Changes per entity and operation</caption><thead><tr><th scope="col">Entity</th>${CHANGE_OPS.map((op) => `<th scope="col">${op}</th>`).join('')}</tr></thead><tbody>${countRows}</tbody></table>
<p>${plan.warnings.length} warning(s), ${blocked.length} blocked record(s), ${quarantine.length} quarantined record(s), ${plan.withheld.length} withheld change(s).</p>
</section>
<div class="controls" role="search">
<label for="filter">Filter rows</label><input id="filter" type="search" placeholder="name, id, field…">
<label for="kind">Change kind</label><select id="kind"><option value="">all</option><option value="create">create</option><option value="update">update</option><option value="suspend">suspend</option><option value="remove">remove</option></select>
<input id="only-changed" type="checkbox"><label for="only-changed">Only changed departments in the tree</label>
<output id="shown" for="filter kind" aria-live="polite"></output>
</div>
<section aria-labelledby="tree-h"><h2 id="tree-h">Department tree</h2>
<p>Each department is marked with what the plan does to it (created, renamed, moved from → to, removed) and how many of its members change.</p>
<ul id="tree" class="tree">${tree.map(treeItem).join('')}</ul>
</section>`;
  // A registered secret value never leaves the process, not even inside a record's field.
  yield redactSecrets(head);
  const [creates, updates, suspensions, removals, others] = rows.tables as [ChangeTable, ChangeTable, ChangeTable, ChangeTable, ChangeTable];
  const tables = [
    table('member-creates', 'Member creates', creates.rows, changeCols([{ head: 'Fields', cell: (c) => fieldDiff(c) }]), () => 'create', limit, creates.count),
    table('member-updates', 'Member updates', updates.rows, changeCols([{ head: 'Field: old → new', cell: fieldDiff }]), () => 'update', limit, updates.count),
    table('member-suspensions', 'Member suspensions', suspensions.rows, changeCols(), () => 'suspend', limit, suspensions.count),
    table('member-removals', 'Member removals', removals.rows, changeCols(), () => 'remove', limit, removals.count),
    table('other-changes', 'Department and position changes', others.rows, [{ head: 'Entity', cell: (c) => c.entity }, { head: 'Operation', cell: (c) => c.op }, ...changeCols([{ head: 'Field: old → new', cell: fieldDiff }])], kindOf, limit, others.count),
    table('warnings', 'Warnings', plan.warnings, [{ head: 'Code', cell: (w) => w.code }, { head: 'Entity', cell: (w) => w.entity }, { head: 'Source id', cell: (w) => w.thirdId }, { head: 'Message', cell: (w) => w.message }], () => 'warning', limit),
    table('blocked', 'Blocked records', blocked, [{ head: 'Entity', cell: (b) => b.entity }, { head: 'Source id', cell: (b) => b.sourceId }, { head: 'Reason', cell: (b) => b.reason }, { head: 'Message', cell: (b) => b.message }], () => 'blocked', limit),
    table('quarantined', 'Quarantined records', quarantine, [{ head: 'Entity', cell: (q) => q.entity }, { head: 'Source id', cell: (q) => q.source_id ?? '' }, { head: 'Source', cell: (q) => q.source }, { head: 'Location', cell: (q) => q.location }, { head: 'Reason', cell: (q) => q.reason }, { head: 'Message', cell: (q) => q.message }], () => 'quarantined', limit),
    table('withheld', 'Withheld changes', plan.withheld, [{ head: 'Entity', cell: (w) => w.change.entity }, { head: 'Source id', cell: (w) => w.change.thirdId }, { head: 'Change', cell: (w) => w.change.description }, { head: 'Why', cell: (w) => w.why }, { head: 'Due', cell: (w) => w.dueAt ?? '' }], () => 'withheld', limit),
  ];
  for (const t of tables) {
    yield '\n';
    for (const chunk of t) yield redactSecrets(chunk);
  }
  yield `
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
