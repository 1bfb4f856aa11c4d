/**
 * The emulator's thin, deterministic translator. No outside service: each target language has a small glossary of
 * common English words; a word found in it is replaced (keeping its capitalisation), any other word is kept as is.
 * Japanese, Chinese and Korean are written romanised (romaji, pinyin without tones, revised romanisation), because the
 * artifact uses a standard PDF font (WinAnsi), which has no CJK glyphs.
 * `x-pseudo` is pseudo-localisation: every vowel gets an accent and each line is wrapped in [ ], so every word changes.
 * Tokens are counted as ceil(characters / 4), the usual rule of thumb.
 */

/**
 * Translation modes. All write the translated text except `bilingual`, which writes each source line followed by its
 * translation. They differ in price: `fast` costs half, `quality` twice the credits of `standard`.
 */
export const TRANSLATION_MODES = ['standard', 'fast', 'quality', 'bilingual'] as const;
/** A translation mode. */
export type TranslationMode = (typeof TRANSLATION_MODES)[number];

/** Credits per token relative to `standard`. */
export function modeCreditRate(mode: TranslationMode): number {
  return mode === 'fast' ? 0.5 : mode === 'quality' ? 2 : 1;
}

type Glossary = Readonly<Record<string, string>>;

const GLOSSARIES: Readonly<Record<string, Glossary>> = {
  // German nouns are capitalised in the glossary, so they stay capitalised whatever the source case.
  de: {
    hello: 'hallo', world: 'Welt', the: 'die', and: 'und', document: 'Dokument', page: 'Seite', translation: 'Übersetzung',
    report: 'Bericht', employee: 'Mitarbeiter', employees: 'Mitarbeiter', department: 'Abteilung', company: 'Unternehmen',
    contract: 'Vertrag', date: 'Datum', name: 'Name', policy: 'Richtlinie', yes: 'ja', no: 'nein', thanks: 'danke',
    welcome: 'willkommen', annual: 'jährlich', leave: 'Urlaub', of: 'von', for: 'für', with: 'mit', is: 'ist', this: 'dies',
    good: 'gut', morning: 'Morgen', day: 'Tag',
  },
  fr: {
    hello: 'bonjour', world: 'monde', the: 'le', and: 'et', document: 'document', page: 'page', translation: 'traduction',
    report: 'rapport', employee: 'employé', employees: 'employés', department: 'service', company: 'entreprise',
    contract: 'contrat', date: 'date', name: 'nom', policy: 'politique', yes: 'oui', no: 'non', thanks: 'merci',
    welcome: 'bienvenue', annual: 'annuel', leave: 'congé', of: 'de', for: 'pour', with: 'avec', is: 'est', this: 'ceci',
    good: 'bon', morning: 'matin', day: 'jour',
  },
  es: {
    hello: 'hola', world: 'mundo', the: 'el', and: 'y', document: 'documento', page: 'página', translation: 'traducción',
    report: 'informe', employee: 'empleado', employees: 'empleados', department: 'departamento', company: 'empresa',
    contract: 'contrato', date: 'fecha', name: 'nombre', policy: 'política', yes: 'sí', no: 'no', thanks: 'gracias',
    welcome: 'bienvenido', annual: 'anual', leave: 'permiso', of: 'de', for: 'para', with: 'con', is: 'es', this: 'esto',
    good: 'bueno', morning: 'mañana', day: 'día',
  },
  it: {
    hello: 'ciao', world: 'mondo', the: 'il', and: 'e', document: 'documento', page: 'pagina', translation: 'traduzione',
    report: 'rapporto', employee: 'dipendente', employees: 'dipendenti', department: 'reparto', company: 'azienda',
    contract: 'contratto', date: 'data', name: 'nome', policy: 'politica', yes: 'sì', no: 'no', thanks: 'grazie',
    welcome: 'benvenuto', annual: 'annuale', leave: 'ferie', of: 'di', for: 'per', with: 'con', is: 'è', this: 'questo',
    good: 'buono', morning: 'mattina', day: 'giorno',
  },
  pt: {
    hello: 'olá', world: 'mundo', the: 'o', and: 'e', document: 'documento', page: 'página', translation: 'tradução',
    report: 'relatório', employee: 'funcionário', employees: 'funcionários', department: 'departamento', company: 'empresa',
    contract: 'contrato', date: 'data', name: 'nome', policy: 'política', yes: 'sim', no: 'não', thanks: 'obrigado',
    welcome: 'bem-vindo', annual: 'anual', leave: 'licença', of: 'de', for: 'para', with: 'com', is: 'é', this: 'isto',
    good: 'bom', morning: 'manhã', day: 'dia',
  },
  nl: {
    hello: 'hallo', world: 'wereld', the: 'de', and: 'en', document: 'document', page: 'pagina', translation: 'vertaling',
    report: 'rapport', employee: 'medewerker', employees: 'medewerkers', department: 'afdeling', company: 'bedrijf',
    contract: 'contract', date: 'datum', name: 'naam', policy: 'beleid', yes: 'ja', no: 'nee', thanks: 'bedankt',
    welcome: 'welkom', annual: 'jaarlijks', leave: 'verlof', of: 'van', for: 'voor', with: 'met', is: 'is', this: 'dit',
    good: 'goed', morning: 'ochtend', day: 'dag',
  },
  ja: {
    hello: 'konnichiwa', world: 'sekai', and: 'to', document: 'bunsho', page: 'peji', translation: 'hon-yaku', report: 'hokokusho',
    employee: 'jugyoin', employees: 'jugyoin', department: 'bumon', company: 'kaisha', contract: 'keiyaku', date: 'hizuke',
    name: 'namae', policy: 'hoshin', yes: 'hai', no: 'iie', thanks: 'arigato', welcome: 'yokoso', annual: 'nenji', leave: 'kyuka',
    good: 'yoi', morning: 'asa', day: 'hi',
  },
  zh: {
    hello: 'nihao', world: 'shijie', and: 'he', document: 'wendang', page: 'yemian', translation: 'fanyi', report: 'baogao',
    employee: 'yuangong', employees: 'yuangong', department: 'bumen', company: 'gongsi', contract: 'hetong', date: 'riqi',
    name: 'mingzi', policy: 'zhengce', yes: 'shi', no: 'bu', thanks: 'xiexie', welcome: 'huanying', annual: 'niandu', leave: 'xiujia',
    good: 'hao', morning: 'zaoshang', day: 'tian',
  },
  ko: {
    hello: 'annyeonghaseyo', world: 'segye', and: 'geurigo', document: 'munseo', page: 'peiji', translation: 'beonyeok',
    report: 'bogoseo', employee: 'jigwon', employees: 'jigwon', department: 'buseo', company: 'hoesa', contract: 'gyeyak',
    date: 'naljja', name: 'ireum', policy: 'jeongchaek', yes: 'ne', no: 'aniyo', thanks: 'gamsahamnida', welcome: 'hwanyeong',
    annual: 'yeongan', leave: 'hyuga', good: 'joeun', morning: 'achim', day: 'nal',
  },
  // English source text translated to English stays as it is.
  en: {},
};

const PSEUDO_VOWELS: Readonly<Record<string, string>> = { a: 'á', e: 'é', i: 'í', o: 'ó', u: 'ú', A: 'Á', E: 'É', I: 'Í', O: 'Ó', U: 'Ú' };

/** Every target language the built-in translator knows. */
export const KNOWN_TARGET_LANGUAGES: readonly string[] = [...Object.keys(GLOSSARIES), 'x-pseudo'];

/**
 * The allowed language a requested code stands for: case does not matter and a region or script subtag falls back to
 * its language (`zh-CN`, `zh-Hans` -> `zh`; `pt-BR` -> `pt`). Undefined when not allowed.
 */
export function resolveTargetLanguage(code: string, allowed: readonly string[]): string | undefined {
  if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(code)) return undefined;
  const lower = code.toLowerCase();
  if (allowed.includes(lower)) return lower;
  const base = lower.split('-')[0] ?? '';
  return base !== 'x' && allowed.includes(base) ? base : undefined;
}

/** Estimated tokens of a text: ceil(characters / 4). */
export function countTokens(text: string): number {
  return Math.ceil([...text].length / 4);
}

function keepCase(source: string, target: string): string {
  if (source.length > 1 && source === source.toUpperCase()) return target.toUpperCase();
  const first = source[0] ?? '';
  if (first !== first.toLowerCase()) return target.charAt(0).toUpperCase() + target.slice(1);
  return target;
}

/** Translates one line into `language` (one of KNOWN_TARGET_LANGUAGES). */
export function translateLine(line: string, language: string): string {
  if (language === 'x-pseudo') return line.trim() === '' ? line : `[${line.replace(/[aeiouAEIOU]/g, (v) => PSEUDO_VOWELS[v] ?? v)}]`;
  const glossary = GLOSSARIES[language];
  if (!glossary) throw new Error(`no glossary for ${language}`);
  return line.replace(/\p{L}+/gu, (word) => {
    const hit = glossary[word.toLowerCase()];
    return hit === undefined ? word : keepCase(word, hit);
  });
}

/** Translates the text of a page line by line; `bilingual` keeps each source line above its translation. */
export function translatePage(text: string, language: string, mode: TranslationMode): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (mode === 'bilingual') out.push(line);
    out.push(translateLine(line, language));
  }
  return out;
}

/** Output tokens expected per input token in a mode (the estimate; the actual count comes from the real output). */
export function outputFactor(mode: TranslationMode): number {
  return mode === 'bilingual' ? 2 : 1;
}

/** Credits for a number of tokens in a mode: ceil(tokens x rate / tokensPerCredit), at least 1. */
export function creditsFor(tokens: number, tokensPerCredit: number, mode: TranslationMode): number {
  return Math.max(1, Math.ceil((tokens * modeCreditRate(mode)) / tokensPerCredit));
}

/**
 * The text that makes a translation fail on purpose, so the failed path is testable: `emulator-fail` anywhere in the
 * PDF's text fails the job with error_code `translation_failed`; `emulator-fail:<code>` fails it with `<code>`
 * (lower case letters, digits and _).
 */
export function requestedFailure(text: string): string | undefined {
  const m = /\bemulator-fail(?::([a-z][a-z0-9_]{0,63}))?/i.exec(text);
  if (!m) return undefined;
  return m[1]?.toLowerCase() ?? 'translation_failed';
}

/** `emulator-cancel` anywhere in a page's text ends the job `canceled` when that page is reached (hold returned). */
export function requestedCancel(text: string): boolean {
  return /\bemulator-cancel\b/i.test(text);
}
