import { readFileSync } from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { TRANSLATE_ERROR_STATUS } from '../../src/translate/errors.js';
import { extractPdfText, writeTranslatedPdf } from '../../src/translate/pdf.js';
import {
  KNOWN_TARGET_LANGUAGES,
  countTokens,
  creditsFor,
  requestedCancel,
  requestedFailure,
  resolveTargetLanguage,
  translateLine,
  translatePage,
} from '../../src/translate/translator.js';
import { pdfText, textPdf } from './support.js';

describe('the deterministic translator', () => {
  it('replaces glossary words keeping their capitalisation and keeps other words', () => {
    expect(translateLine('Hello WORLD, the Annual report of Acme', 'fr')).toBe('Bonjour MONDE, le Annuel rapport de Acme');
    expect(translateLine('Thanks for the contract', 'es')).toBe('Gracias para el contrato');
    expect(translateLine('Hello world', 'en')).toBe('Hello world');
    expect(translateLine('Good morning', 'ko')).toBe('Joeun achim');
  });

  it('x-pseudo changes every non-empty line', () => {
    expect(translateLine('Acme quarterly', 'x-pseudo')).toBe('[Ácmé qúártérly]');
    expect(translateLine('', 'x-pseudo')).toBe('');
  });

  it('bilingual keeps each source line above its translation', () => {
    expect(translatePage('Hello\nworld', 'de', 'bilingual')).toEqual(['Hello', 'Hallo', 'world', 'Welt']);
    expect(translatePage('Hello\nworld', 'de', 'standard')).toEqual(['Hallo', 'Welt']);
  });

  it('the same input always gives the same output', () => {
    for (const lang of KNOWN_TARGET_LANGUAGES) expect(translateLine('Welcome to the department', lang)).toBe(translateLine('Welcome to the department', lang));
  });

  it('resolves language codes case-insensitively, falling back from a region subtag', () => {
    expect(resolveTargetLanguage('DE', KNOWN_TARGET_LANGUAGES)).toBe('de');
    expect(resolveTargetLanguage('zh-Hans-CN', KNOWN_TARGET_LANGUAGES)).toBe('zh');
    expect(resolveTargetLanguage('x-pseudo', KNOWN_TARGET_LANGUAGES)).toBe('x-pseudo');
    expect(resolveTargetLanguage('x-other', KNOWN_TARGET_LANGUAGES)).toBeUndefined();
    expect(resolveTargetLanguage('tlh', KNOWN_TARGET_LANGUAGES)).toBeUndefined();
    expect(resolveTargetLanguage('de/../x', KNOWN_TARGET_LANGUAGES)).toBeUndefined();
    expect(resolveTargetLanguage('fr', ['de'])).toBeUndefined();
  });

  it('counts tokens and credits', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('abcde')).toBe(2);
    expect(creditsFor(0, 100, 'standard')).toBe(1);
    expect(creditsFor(250, 100, 'standard')).toBe(3);
    expect(creditsFor(250, 100, 'fast')).toBe(2);
    expect(creditsFor(250, 100, 'quality')).toBe(5);
  });

  it('recognises the failure and cancel markers', () => {
    expect(requestedFailure('nothing here')).toBeUndefined();
    expect(requestedFailure('x emulator-fail y')).toBe('translation_failed');
    expect(requestedFailure('emulator-fail:quota_exceeded.')).toBe('quota_exceeded');
    expect(requestedCancel('please emulator-cancel')).toBe(true);
    expect(requestedCancel('emulator-cancelled')).toBe(false);
  });
});

describe('PDF in and out', () => {
  it('wraps long lines and overflows onto more pages without losing text', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const lines = Array.from({ length: 120 }, (_, i) => `line ${i} ${i === 5 ? long : ''}`);
    const bytes = await writeTranslatedPdf([lines], { title: 't', language: 'de' });
    const doc = await PDFDocument.load(bytes);
    expect(doc.getPageCount()).toBeGreaterThan(1);
    const text = (await pdfText(bytes)).join('\n');
    expect(text).toContain('line 119');
    expect(text).toContain('word29');
  });

  it('characters the standard font cannot show become ?, and writing is byte-for-byte deterministic', async () => {
    const a = await writeTranslatedPdf([['Tokyo 東京 office', 'Ünïcödé ok']], { title: 't', language: 'ja' });
    const b = await writeTranslatedPdf([['Tokyo 東京 office', 'Ünïcödé ok']], { title: 't', language: 'ja' });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const text = (await pdfText(a))[0] ?? '';
    expect(text).toContain('Tokyo ?? office');
    expect(text).toContain('Ünïcödé ok');
  });

  it('extracts the text of each page', async () => {
    expect((await extractPdfText(await textPdf(['one', 'two\nthree']))).pages).toEqual(['one', 'two\nthree']);
  });
});

describe('the package README documents the error table', () => {
  it('every code with its status, as the code has it', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Document translation API'));
    for (const [code, status] of Object.entries(TRANSLATE_ERROR_STATUS)) expect(section).toContain(`\`${code}\` ${status}`);
  });
});
