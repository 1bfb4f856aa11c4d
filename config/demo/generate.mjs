#!/usr/bin/env node
// Writes the demo's sample HR data (deterministic: the same files on every run).
//   node config/demo/generate.mjs
// departments.csv, positions.csv and members.csv are the "HR export"; employees.json is an "HRIS" payload
// (BambooHR-like shape) with the contractors of the field-service subsidiary, placed in the CSV's departments.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// mulberry32: a tiny seeded PRNG, so the data never changes between runs.
let state = 20261122;
function rand() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(rand() * list.length)];

// [id, name, parent id, head count, titles]
const departments = [
  ['D100', 'Executive Office', '', 4, ['Chief Executive Officer', 'Chief Operating Officer', 'Executive Assistant']],
  ['D200', 'Engineering', '', 2, ['VP Engineering']],
  ['D210', 'Platform', 'D200', 14, ['Software Engineer', 'Senior Software Engineer', 'Staff Engineer', 'Engineering Manager']],
  ['D211', 'Site Reliability', 'D210', 9, ['Site Reliability Engineer', 'Senior Site Reliability Engineer']],
  ['D212', 'Developer Tools', 'D210', 7, ['Software Engineer', 'Senior Software Engineer']],
  ['D220', 'Product Engineering', 'D200', 6, ['Engineering Manager', 'Staff Engineer']],
  ['D221', 'Web', 'D220', 16, ['Frontend Engineer', 'Senior Frontend Engineer']],
  ['D222', 'Mobile', 'D220', 12, ['iOS Engineer', 'Android Engineer']],
  ['D230', 'Data', 'D200', 4, ['Head of Data']],
  ['D231', 'Analytics', 'D230', 8, ['Data Analyst', 'Analytics Engineer']],
  ['D232', 'Machine Learning', 'D230', 7, ['Machine Learning Engineer', 'Data Scientist']],
  ['D240', 'Security', 'D200', 6, ['Security Engineer', 'Security Analyst']],
  ['D250', 'Quality Assurance', 'D200', 7, ['QA Engineer', 'Test Automation Engineer']],
  ['D300', 'Sales', '', 3, ['VP Sales', 'Sales Operations Manager']],
  ['D310', 'Sales EMEA', 'D300', 14, ['Account Executive', 'Sales Development Representative']],
  ['D320', 'Sales Americas', 'D300', 16, ['Account Executive', 'Sales Development Representative', 'Regional Sales Director']],
  ['D330', 'Sales APAC', 'D300', 10, ['Account Executive', 'Sales Development Representative']],
  ['D340', 'Solutions Engineering', 'D300', 8, ['Solutions Engineer', 'Senior Solutions Engineer']],
  ['D400', 'Marketing', '', 3, ['VP Marketing']],
  ['D410', 'Brand', 'D400', 6, ['Brand Designer', 'Content Strategist']],
  ['D420', 'Growth', 'D400', 7, ['Growth Marketer', 'Marketing Analyst']],
  ['D430', 'Product Marketing', 'D400', 5, ['Product Marketing Manager']],
  ['D500', 'Finance', '', 2, ['Chief Financial Officer']],
  ['D510', 'Accounting', 'D500', 7, ['Accountant', 'Senior Accountant', 'Payroll Specialist']],
  ['D520', 'Financial Planning', 'D500', 5, ['Financial Analyst']],
  ['D600', 'People', '', 2, ['Chief People Officer']],
  ['D610', 'Recruiting', 'D600', 7, ['Recruiter', 'Technical Recruiter', 'Recruiting Coordinator']],
  ['D620', 'People Operations', 'D600', 5, ['People Partner', 'HR Generalist']],
  ['D700', 'Customer Success', '', 3, ['VP Customer Success']],
  ['D710', 'Support', 'D700', 18, ['Support Engineer', 'Support Specialist', 'Support Team Lead']],
  ['D720', 'Onboarding', 'D700', 8, ['Onboarding Manager', 'Implementation Consultant']],
  ['D730', 'Field Service', 'D700', 4, ['Field Service Manager']],
  ['D800', 'Legal', '', 5, ['General Counsel', 'Legal Counsel', 'Paralegal']],
  ['D900', 'Operations', '', 2, ['Head of Operations']],
  ['D910', 'IT', 'D900', 7, ['IT Administrator', 'IT Support Technician']],
  ['D920', 'Facilities', 'D900', 4, ['Facilities Coordinator', 'Office Manager']],
];

const firstNames = ['Ada', 'Alan', 'Amara', 'Ana', 'Arjun', 'Beatriz', 'Ben', 'Chen', 'Chloe', 'Daniel', 'Diego', 'Elena', 'Emeka', 'Emma', 'Fatima', 'Felix', 'Grace', 'Hana', 'Hiroshi', 'Ines', 'Isaac', 'Jamal', 'Jia', 'Jonas', 'Julia', 'Kenji', 'Laila', 'Lars', 'Leila', 'Liam', 'Lucia', 'Maya', 'Mateo', 'Mei', 'Nadia', 'Noah', 'Olga', 'Omar', 'Priya', 'Rafael', 'Ravi', 'Sara', 'Sofia', 'Tariq', 'Tomas', 'Uma', 'Victor', 'Wei', 'Yara', 'Zoe'];
const lastNames = ['Adeyemi', 'Andersson', 'Bauer', 'Bianchi', 'Chen', 'Costa', 'Dubois', 'Fischer', 'Garcia', 'Haddad', 'Ivanova', 'Jensen', 'Kim', 'Kowalski', 'Larsen', 'Lopez', 'Martin', 'Meyer', 'Moreau', 'Nakamura', 'Nguyen', 'Novak', 'Okafor', 'Olsen', 'Patel', 'Petrov', 'Rossi', 'Santos', 'Schmidt', 'Silva', 'Singh', 'Suzuki', 'Tanaka', 'Wang', 'Weber', 'Yilmaz', 'Zhang'];
const areaCodes = ['212', '312', '415', '512', '617', '646', '206', '303'];

const usedEmails = new Set();
function person() {
  const first = pick(firstNames);
  const last = pick(lastNames);
  let email = `${first}.${last}`.toLowerCase();
  for (let n = 2; usedEmails.has(email); n += 1) email = `${first}.${last}${n}`.toLowerCase();
  usedEmails.add(email);
  return { first, last, email: `${email}@demo-corp.test` };
}
// Phones must be unique: the platform finds an existing account by phone first.
const usedPhones = new Set();
function phone() {
  for (;;) {
    const p = `+1 ${pick(areaCodes)} 555 01${String(Math.floor(rand() * 100)).padStart(2, '0')}`;
    if (!usedPhones.has(p)) {
      usedPhones.add(p);
      return p;
    }
  }
}
const csv = (rows) => rows.map((r) => r.map((v) => (/[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v))).join(',')).join('\n') + '\n';

writeFileSync(join(here, 'departments.csv'), csv([['dept_id', 'name', 'parent_id'], ...departments.map(([id, name, parent]) => [id, name, parent])]));

const titles = [...new Set(departments.flatMap((d) => d[4]))].sort();
writeFileSync(join(here, 'positions.csv'), csv([['pos_id', 'name'], ...titles.map((t, i) => [`P${String(i + 1).padStart(3, '0')}`, t])]));

const members = [['employee_id', 'first_name', 'last_name', 'email', 'phone', 'title', 'dept_id', 'status']];
let seq = 1000;
for (const [id, , , count, deptTitles] of departments) {
  for (let i = 0; i < count; i += 1) {
    const p = person();
    const r = rand();
    // A few people on leave (suspended) and a few who have left (not created on the platform).
    const status = r < 0.03 ? 'leave' : r < 0.05 ? 'terminated' : 'active';
    members.push([`E${++seq}`, p.first, p.last, p.email, rand() < 0.6 ? phone() : '', i === 0 ? deptTitles[0] : pick(deptTitles), id, status]);
  }
}
writeFileSync(join(here, 'members.csv'), csv(members));

// The HRIS: field-service contractors, in the CSV's Field Service and Support departments.
const employees = [];
for (let i = 0; i < 60; i += 1) {
  const p = person();
  employees.push({
    id: `C${5001 + i}`,
    firstName: p.first,
    lastName: p.last,
    workEmail: p.email.replace('@demo-corp.test', '@contractors.demo-corp.test'),
    mobilePhone: rand() < 0.7 ? phone() : null,
    jobTitle: pick(['Field Technician', 'Senior Field Technician', 'Installation Specialist']),
    department: { id: i < 45 ? 'D730' : 'D710', name: i < 45 ? 'Field Service' : 'Support' },
    employmentStatus: i % 29 === 28 ? 'Inactive' : 'Active',
  });
}
writeFileSync(join(here, 'employees.json'), `${JSON.stringify({ data: { employees }, links: { next: null } }, null, 2)}\n`);
console.log(`demo data: ${departments.length} departments, ${titles.length} positions, ${members.length - 1} CSV members, ${employees.length} HRIS members`);
