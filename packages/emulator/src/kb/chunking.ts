/**
 * Turning an uploaded document into chunks: text extraction (UTF-8 text, Markdown, text-extractable PDF via unpdf)
 * and a deterministic splitter. A document whose content cannot be read (invalid UTF-8, a broken PDF, a PDF without
 * a text layer) raises UnreadableDocumentError, and its status becomes `failed`.
 */
import { extractText, getDocumentProxy } from 'unpdf';

/** Target size of a chunk in characters; a paragraph longer than this is split at sentence ends. */
export const CHUNK_TARGET_CHARS = 800;

/** The content of a document cannot be turned into text. */
export class UnreadableDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableDocumentError';
  }
}

/** Extracts the text of a document of a supported type. */
export async function extractDocumentText(bytes: Uint8Array, mimeType: string): Promise<string> {
  if (mimeType === 'application/pdf') return extractPdfText(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new UnreadableDocumentError('the content is not valid UTF-8 text');
  }
}

async function extractPdfText(bytes: Uint8Array): Promise<string> {
  let pages: string[];
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy. verbosity 0 keeps its warnings off stdout.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    throw new UnreadableDocumentError(`the PDF cannot be read: ${(err as Error).message}`);
  }
  const text = pages.map((p) => p.trim()).filter((p) => p.length > 0).join('\n\n');
  if (text === '') throw new UnreadableDocumentError('the PDF has no text layer (scanned images are not read)');
  return text;
}

/** Splits a long paragraph at sentence ends, then hard at the target size. */
function splitLong(paragraph: string, max: number): string[] {
  if (paragraph.length <= max) return [paragraph];
  const sentences = paragraph.match(/[^.!?。！？]+[.!?。！？]*\s*/gu) ?? [paragraph];
  const out: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current !== '' && current.length + sentence.length > max) {
      out.push(current.trim());
      current = '';
    }
    if (sentence.length > max) {
      for (let i = 0; i < sentence.length; i += max) out.push(sentence.slice(i, i + max).trim());
      continue;
    }
    current += sentence;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out.filter((s) => s !== '');
}

/**
 * Chunks text: paragraphs (blank-line separated) are packed into chunks of up to CHUNK_TARGET_CHARS; for Markdown a
 * heading always starts a new chunk and stays with the text under it. Whitespace-only text gives no chunks.
 */
export function chunkText(text: string, mimeType: string, max = CHUNK_TARGET_CHARS): string[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const blocks = normalised.split(/\n\s*\n/).map((b) => b.trim()).filter((b) => b !== '');
  const chunks: string[] = [];
  let current = '';
  const flush = (): void => {
    if (current.trim() !== '') chunks.push(current.trim());
    current = '';
  };
  for (const block of blocks) {
    const startsSection = mimeType === 'text/markdown' && /^#{1,6}\s/.test(block);
    if (startsSection) flush();
    for (const piece of splitLong(block, max)) {
      if (current !== '' && current.length + 2 + piece.length > max) flush();
      current = current === '' ? piece : `${current}\n\n${piece}`;
    }
  }
  flush();
  return chunks;
}
