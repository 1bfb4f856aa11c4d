/**
 * PDF in and out: unpdf (pdf.js) extracts the text layer of an upload; pdf-lib writes the translated artifact.
 */
import { PDFDocument, StandardFonts, type PDFFont } from 'pdf-lib';
import { extractText, getDocumentProxy } from 'unpdf';
import { TranslateApiError } from './errors.js';

/** The text layer of an uploaded PDF, one string per page. */
export interface ExtractedPdf {
  pages: string[];
}

/**
 * Extracts the text of each page. Throws `unsupported_pdf` for bytes that are not a PDF or that pdf.js cannot open
 * (corrupt, encrypted), and `ocr_required` for a PDF without any text layer (scanned images).
 */
export async function extractPdfText(bytes: Uint8Array): Promise<ExtractedPdf> {
  if (!Buffer.from(bytes.subarray(0, 1024)).toString('latin1').includes('%PDF-')) {
    throw new TranslateApiError('unsupported_pdf', 'the file is not a PDF (no %PDF- header); a text-extractable PDF is needed');
  }
  let pages: string[];
  try {
    // pdf.js may detach the buffer it is given: hand it a copy. verbosity 0 keeps its warnings off stdout.
    const doc = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
    try {
      const { text } = await extractText(doc, { mergePages: false });
      pages = text;
    } finally {
      await doc.destroy();
    }
  } catch (err) {
    const why = err instanceof Error && err.name === 'PasswordException' ? 'the PDF is encrypted' : 'the PDF cannot be parsed';
    throw new TranslateApiError('unsupported_pdf', `${why}; a text-extractable PDF is needed`);
  }
  if (pages.length === 0) throw new TranslateApiError('unsupported_pdf', 'the PDF has no pages; a text-extractable PDF is needed');
  if (pages.every((p) => p.trim() === '')) {
    throw new TranslateApiError('ocr_required', 'the PDF has no text layer (scanned images need OCR); a text-extractable PDF is needed');
  }
  return { pages };
}

const PAGE_WIDTH = 595.28; // A4
const PAGE_HEIGHT = 841.89;
const MARGIN = 56;
const FONT_SIZE = 11;
const LINE_HEIGHT = 15;

/** Replaces characters the standard font cannot encode (WinAnsi) with '?', so writing never throws. */
function encodable(charset: ReadonlySet<number>, line: string): string {
  let out = '';
  for (const ch of line.replace(/\t/g, '    ')) out += charset.has(ch.codePointAt(0) ?? 0) ? ch : '?';
  return out;
}

/** Breaks a line into pieces that fit the text width, at spaces where possible. */
function wrap(font: PDFFont, line: string, width: number): string[] {
  if (font.widthOfTextAtSize(line, FONT_SIZE) <= width) return [line];
  const out: string[] = [];
  let current = '';
  for (const word of line.split(/(\s+)/)) {
    const next = current + word;
    if (font.widthOfTextAtSize(next, FONT_SIZE) <= width) {
      current = next;
      continue;
    }
    if (current.trim() !== '') out.push(current.trimEnd());
    current = word.trimStart();
    // A single word wider than the line: cut it by characters.
    while (font.widthOfTextAtSize(current, FONT_SIZE) > width && current.length > 1) {
      let cut = current.length - 1;
      while (cut > 1 && font.widthOfTextAtSize(current.slice(0, cut), FONT_SIZE) > width) cut--;
      out.push(current.slice(0, cut));
      current = current.slice(cut);
    }
  }
  if (current.trim() !== '') out.push(current.trimEnd());
  return out;
}

/** Writes the translated pages as a real PDF (A4, Helvetica): one or more output pages per source page. */
export async function writeTranslatedPdf(pages: string[][], meta: { title: string; language: string }): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const charset = new Set(font.getCharacterSet());
  doc.setTitle(meta.title);
  doc.setLanguage(meta.language);
  doc.setProducer('orgsync translation emulator');
  doc.setCreator('orgsync translation emulator');
  // Fixed dates keep the artifact byte-for-byte deterministic.
  doc.setCreationDate(new Date(0));
  doc.setModificationDate(new Date(0));
  const width = PAGE_WIDTH - 2 * MARGIN;
  for (const lines of pages) {
    let page = doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    let y = PAGE_HEIGHT - MARGIN;
    for (const raw of lines) {
      const pieces = raw.trim() === '' ? [''] : wrap(font, encodable(charset, raw), width);
      for (const piece of pieces) {
        if (y < MARGIN) {
          page = doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
          y = PAGE_HEIGHT - MARGIN;
        }
        if (piece !== '') page.drawText(piece, { x: MARGIN, y, size: FONT_SIZE, font });
        y -= LINE_HEIGHT;
      }
    }
  }
  return doc.save();
}
