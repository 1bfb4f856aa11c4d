/**
 * A plan's changes gathered one by one for the text and HTML reports (issue 31 point 2: `approvals show` of a saved
 * plan of a million changes reads them as they stream and keeps only what the reports list). The reports list a
 * bounded number of rows per group and count the rest, so what is kept is bounded whatever the plan's size.
 */
import type { Change, EntityKind, Plan } from '../../domain/index.js';
import { CHANGE_OPS, ENTITY_KINDS } from '../../domain/index.js';
import { ROWS_PER_GROUP } from '../render.js';
import { HTML_ROWS_PER_TABLE, PlanReportRows } from './html.js';

/** What the text report keeps of one entity and operation: how many changes, and the first ROWS_PER_GROUP. */
interface TextGroup {
  count: number;
  rows: Change[];
}

/** The report rows of a plan's changes, taken in plan order (`add`), and the plan the text report renders from. */
export class GatheredChanges {
  private readonly groups = new Map<string, TextGroup>();
  private total = 0;
  private htmlRows: PlanReportRows | undefined;

  constructor(private readonly options: { html?: boolean; memberDepartments?: Readonly<Record<string, string>> } = {}) {
    this.htmlRows = this.newHtmlRows();
  }

  private newHtmlRows(): PlanReportRows | undefined {
    return this.options.html ? new PlanReportRows(HTML_ROWS_PER_TABLE, this.options.memberDepartments) : undefined;
  }

  /** The HTML report's rows (at most HTML_ROWS_PER_TABLE per table), when asked for. */
  get html(): PlanReportRows | undefined {
    return this.htmlRows;
  }

  /** Takes the next change in plan order. */
  add(c: Change): void {
    this.total += 1;
    const key = `${c.entity}:${c.op}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { count: 0, rows: [] }));
    if (group.count++ < ROWS_PER_GROUP) group.rows.push(c);
    this.htmlRows?.add(c);
  }

  /** Forgets every change taken (a reader that hands them over again). */
  restart(): void {
    this.groups.clear();
    this.total = 0;
    this.htmlRows = this.newHtmlRows();
  }

  /**
   * `head` with changes the text report (planTextLines) renders as it would the whole plan's: per entity and
   * operation the first ROWS_PER_GROUP in plan order, then the first of them repeated up to the group's count (the
   * report counts a group and lists its first rows). One reference per change, no change object; not a plan to apply.
   */
  reportPlan(head: Omit<Plan, 'changes'>): Plan {
    const changes: Change[] = [];
    for (const entity of ENTITY_KINDS as readonly EntityKind[]) {
      for (const op of CHANGE_OPS) {
        const group = this.groups.get(`${entity}:${op}`);
        if (!group) continue;
        for (const c of group.rows) changes.push(c);
        for (let i = group.rows.length; i < group.count; i++) changes.push(group.rows[0]!);
      }
    }
    return { ...head, changes };
  }

  /** How many changes were taken. */
  get count(): number {
    return this.total;
  }
}
