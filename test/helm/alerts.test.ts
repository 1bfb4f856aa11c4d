import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { promtool, requireTool } from '../observability/tools.js';
import { chartDir, chartFile, renderAlerts, values } from './chart.js';
import { tempDir } from '../helpers/temp.js';

const bin = requireTool('promtool');

describe.skipIf(!bin)('chart alert rules through promtool', () => {
  const dir = tempDir('orgsync-alerts-');
  writeFileSync(join(dir, 'alerts.rendered.yaml'), renderAlerts(values()));
  copyFileSync(join(chartDir, 'tests/alerts.test.yaml'), join(dir, 'alerts.test.yaml'));

  it('promtool check rules accepts them', () => {
    const r = promtool(bin!, ['check', 'rules', join(dir, 'alerts.rendered.yaml')]);
    expect(r.output).toContain('SUCCESS: 7 rules found');
    expect(r.status).toBe(0);
  });

  it('promtool test rules passes the unit tests, which cover every alert', () => {
    const tests = parse(chartFile('tests/alerts.test.yaml')) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] };
    const firing = new Set(tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    const rules = parse(renderAlerts(values())) as { groups: { rules: { alert: string }[] }[] };
    for (const rule of rules.groups.flatMap((g) => g.rules)) expect(firing).toContain(rule.alert);
    const r = promtool(bin!, ['test', 'rules', join(dir, 'alerts.test.yaml')]);
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('promtool test rules fails when an alert no longer fires (the tests can fail)', () => {
    const broken = renderAlerts(values()).replace('> orgsync_last_success_timestamp_seconds', '< orgsync_last_success_timestamp_seconds');
    writeFileSync(join(dir, 'alerts.rendered.yaml'), broken);
    try {
      const r = promtool(bin!, ['test', 'rules', join(dir, 'alerts.test.yaml')]);
      expect(r.status).not.toBe(0);
      expect(r.output).toContain('OrgsyncSyncFailing');
    } finally {
      writeFileSync(join(dir, 'alerts.rendered.yaml'), renderAlerts(values()));
    }
  });
});
