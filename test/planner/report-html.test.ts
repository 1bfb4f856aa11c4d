/**
 * The plan report opened in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core): the tree
 * shows a moved department under its new parent marked as moved, a removed member row is present and filterable, the
 * page makes no network request, and an axe-style check finds no table without headers and no unlabelled control.
 */
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calculatePlan } from '../../src/planner/index.js';
import { buildDepartmentTree, renderPlanHtml } from '../../src/planner/report/index.js';
import { REPORT_CSP } from '../../src/planner/report/html.js';
import { dept, desired, member, OPTS, ROOT, snapshot } from './fixtures.js';
import { tempDir } from '../helpers/temp.js';

const sales = dept({ id: 'd-sales', name: 'Sales', third_department_id: 'sales' });
const eng = dept({ id: 'd-eng', name: 'Engineering', third_department_id: 'eng' });
const emea = dept({ id: 'd-emea', name: 'EMEA', third_department_id: 'emea', parent_id: 'd-sales', path: '/Acme/Sales/EMEA', depth: 2 });
const ann = member({ account_id: 'a1', display_name: 'Ann Archer', third_user_id: 'u1', department_id: 'd-emea', email: 'ann@x.test' });
const bob = member({ account_id: 'a2', display_name: 'Bob Brown', third_user_id: 'u2', department_id: 'd-eng', email: 'bob@x.test' });
const cid = member({ account_id: 'a3', display_name: 'Cid Clay', third_user_id: 'u3', department_id: 'd-eng', email: 'cid@x.test', title: 'Dev' });

/** EMEA moves from Sales to Engineering, Bob is removed, Cid's title changes, Dee is created, Sales is renamed. */
function reviewPlan() {
  return calculatePlan(
    desired({
      departments: [
        { source_id: 'sales', name: 'Sales & Marketing' },
        { source_id: 'eng', name: 'Engineering' },
        { source_id: 'emea', name: 'EMEA', parent_source_id: 'eng' },
      ],
      members: [
        { source_id: 'u1', display_name: 'Ann Archer', email: 'ann@x.test', department_source_id: 'emea', status: 'active' },
        { source_id: 'u3', display_name: 'Cid Clay', email: 'cid@x.test', title: 'Lead', department_source_id: 'eng', status: 'active' },
        { source_id: 'u4', display_name: 'Dee Dunn', email: 'dee@x.test', department_source_id: 'sales', status: 'active' },
      ],
    }),
    snapshot({ departments: [ROOT, sales, eng, emea], members: [ann, bob, cid], ownedMembers: new Map([['u1', 'a1'], ['u2', 'a2'], ['u3', 'a3']]) }),
    { ...OPTS, memberRemoval: 'left' },
  );
}

describe('plan report: the tree', () => {
  it('hangs a moved department under its new parent with from -> to, counts member changes per department', () => {
    const plan = reviewPlan();
    const tree = buildDepartmentTree(plan, [ROOT, sales, eng, emea], { a2: 'd-eng', a3: 'd-eng' });
    const acme = tree[0]!;
    expect(acme.name).toBe('Acme');
    const engNode = acme.children.find((n) => n.id === 'd-eng')!;
    const moved = engNode.children.find((n) => n.id === 'd-emea')!;
    expect(moved.marks).toEqual(['moved']);
    expect(moved.movedFrom).toBe('Acme / Sales');
    expect(moved.movedTo).toBe('Acme / Engineering');
    expect(moved.name).toBe('EMEA');
    expect(engNode.members).toEqual({ create: 0, update: 1, suspend: 0, remove: 1 });
    const salesNode = acme.children.find((n) => n.id === 'd-sales')!;
    expect(salesNode).toMatchObject({ name: 'Sales & Marketing', marks: ['renamed'], renamedFrom: 'Sales', children: [] });
    expect(salesNode.members.create).toBe(1);
  });

  it('escapes every value and carries no external reference', () => {
    const html = renderPlanHtml(reviewPlan(), { departments: [ROOT, sales, eng, emea] });
    expect(html).toContain('Sales &amp; Marketing');
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(html).toContain("default-src 'none'");
  });
});

/** Run in the page (plain JS: the test's TypeScript has no DOM types). */
const A11Y_CHECK = `(() => {
  const out = [];
  for (const t of document.querySelectorAll('table')) {
    if (t.querySelectorAll('thead th[scope="col"]').length === 0) out.push('table#' + t.id + ' has no column headers');
    if (!t.querySelector('caption')) out.push('table#' + t.id + ' has no caption');
    const cols = t.querySelectorAll('thead th').length;
    for (const r of t.querySelectorAll('tbody tr')) if (r.children.length !== cols) out.push('table#' + t.id + ': a row has ' + r.children.length + ' cells for ' + cols + ' headers');
  }
  for (const el of document.querySelectorAll('input, select, textarea, button')) {
    const labelled = (el.labels && Array.from(el.labels).some((l) => (l.textContent || '').trim() !== '')) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    if (!labelled) out.push(el.tagName.toLowerCase() + '#' + el.id + ' has no label');
  }
  for (const h of document.querySelectorAll('section')) if (!h.querySelector('h2')) out.push('a section without a heading');
  if (document.querySelectorAll('h1').length !== 1) out.push('not exactly one h1');
  if (!document.documentElement.lang) out.push('no lang on <html>');
  if (!document.title) out.push('no title');
  return out;
})()`;

describe('plan report: in headless Chromium', () => {
  let browser: Browser;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('orgsync-report-');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the move and the removal, filters rows, fetches nothing, and has headers and labels everywhere', async () => {
    const plan = reviewPlan();
    const file = join(dir, 'plan.html');
    writeFileSync(file, renderPlanHtml(plan, { departments: [ROOT, sales, eng, emea], memberDepartments: { a2: 'd-eng' }, approval: { digest: 'sha256:0123456789ab', status: 'pending' } }));
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url() !== pathToFileURL(file).href) requests.push(r.url());
    });
    await page.goto(pathToFileURL(file).href);

    // The moved department sits under its new parent, marked as moved with from -> to.
    const moved = page.locator('li[data-dept="d-eng"] > ul > li[data-dept="d-emea"]');
    await expect.poll(() => moved.count()).toBe(1);
    expect(await moved.getAttribute('data-marks')).toBe('moved');
    expect(await moved.locator(':scope > .badge').innerText()).toBe('moved: Acme / Sales → Acme / Engineering');
    expect(await page.locator('li[data-dept="d-sales"] li[data-dept="d-emea"]').count()).toBe(0);

    // The removed member's row is there and the filter finds it (and hides it when it does not match).
    const bobRow = page.locator('#member-removals tbody tr', { hasText: 'Bob Brown' });
    expect(await bobRow.count()).toBe(1);
    expect(await bobRow.isVisible()).toBe(true);
    await page.fill('#filter', 'bob');
    expect(await bobRow.isVisible()).toBe(true);
    expect(await page.locator('#member-updates tbody tr', { hasText: 'Cid Clay' }).isVisible()).toBe(false);
    await page.fill('#filter', 'cid');
    expect(await bobRow.isVisible()).toBe(false);
    await page.fill('#filter', '');
    await page.selectOption('#kind', 'remove');
    expect(await bobRow.isVisible()).toBe(true);
    expect(await page.locator('#member-creates tbody tr', { hasText: 'Dee Dunn' }).isVisible()).toBe(false);
    await page.selectOption('#kind', '');

    // Axe-style checks, written out: every table has column headers, every control a label, one h1, a language.
    const problems = (await page.evaluate(A11Y_CHECK)) as string[];
    expect(problems).toEqual([]);
    // Colour is never the only signal: every mark carries its word.
    for (const b of await page.locator('.badge').all()) expect((await b.innerText()).trim()).toMatch(/^(created|adopted|renamed|updated|moved|removed)/);
    expect(await page.locator('.refusal').count()).toBe(0);

    const shot = join(dir, 'plan-report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(1000);
    expect(requests).toEqual([]);
    await page.close();
  }, 60_000);

  it('issue 44: the CSP admits only the report\'s own style and script, by hash: they run, an injected inline script does not', async () => {
    const plan = reviewPlan();
    const html = renderPlanHtml(plan, { departments: [ROOT, sales, eng, emea] });
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    expect(csp).toBe(REPORT_CSP);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*'; /);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'; /);
    // The same page with one more inline script and style (as a field could try, were it not escaped).
    const injected = html.replace('</body>', '<script>document.title="injected"</script><style>body{background:#f00}</style></body>');
    const file = join(dir, 'plan-csp.html');
    writeFileSync(file, injected);
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(pathToFileURL(file).href);
    // The report's own script ran (it fills the row count) and its style applies (the table's collapsed borders).
    await expect.poll(() => page.locator('#shown').innerText()).toMatch(/row\(s\) shown$/);
    expect(await page.evaluate('getComputedStyle(document.querySelector("table")).borderCollapse')).toBe('collapse');
    // The injected ones did not: refused by the CSP, and said so.
    expect(await page.title()).not.toBe('injected');
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(255, 255, 255)');
    expect(violations.length).toBeGreaterThanOrEqual(2);
    await page.close();
  }, 60_000);
});
