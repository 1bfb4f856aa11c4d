/**
 * The emulator's thin, deterministic translator. No outside service: each target language has a small glossary of
 * common English words; a word found in it is replaced (keeping its capitalisation), any other word is kept as is.
 * `x-pseudo` is pseudo-localisation: every vowel gets an accent and each line is wrapped in [ ], so every word changes.
 * Tokens are counted as ceil(characters / 4), the usual rule of thumb.
 */

/** Translation modes: `standard` writes the translated text; `bilingual` writes each source line followed by its translation. */
export const TRANSLATION_MODES = ['standard', 'bilingual'] as const;
/** A translation mode. */
export type TranslationMode = (typeof TRANSLATION_MODES)[number];

type Glossary = Readonly<Record<string, string>>;

// Only Latin-script languages: the artifact is written with a standard PDF font (WinAnsi), which cannot show CJK.
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
  // English source text translated to English stays as it is.
  en: {},
};

const PSEUDO_VOWELS: Readonly<Record<string, string>> = { a: 'á', e: 'é', i: 'í', o: 'ó', u: 'ú', A: 'Á', E: 'É', I: 'Í', O: 'Ó', U: 'Ú' };

/** Every target language the built-in translator knows. */
export const KNOWN_TARGET_LANGUAGES: readonly string[] = [...Object.keys(GLOSSARIES), 'x-pseudo'];

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

/** Credits for a number of tokens: ceil(tokens / tokensPerCredit), at least 1. */
export function creditsFor(tokens: number, tokensPerCredit: number): number {
  return Math.max(1, Math.ceil(tokens / tokensPerCredit));
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
