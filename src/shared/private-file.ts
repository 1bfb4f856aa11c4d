/**
 * Files and folders that hold personal data (issue 29 point 2): the state DB, backups, saved plans, HTML reports.
 * They are created owner-only (0600 files, 0700 folders) whatever the process's umask, so another user or process on
 * the node cannot read every employee's record.
 */
import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';

/** The mode of a private file: read and write for its owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode of a folder orgsync creates for private files. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Writes `data` to `path` as a private file: created 0600, and an existing file whose mode lets others read it is
 * narrowed to 0600 before the data goes in.
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  writePrivateFileChunks(path, [data]);
}

/**
 * Writes `chunks` one after the other to `path` as a private file (as writePrivateFile): for documents longer than a
 * string can be (a saved plan of a million changes), written as they are made.
 */
export function writePrivateFileChunks(path: string, chunks: Iterable<string | Uint8Array>): void {
  const fd = openSync(path, 'w', PRIVATE_FILE_MODE);
  try {
    if ((fstatSync(fd).mode & 0o077) !== 0) fchmodSync(fd, PRIVATE_FILE_MODE);
    for (const data of chunks) {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      let at = 0;
      while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    }
  } finally {
    closeSync(fd);
  }
}

/** Creates `path` empty and private when it does not exist (files SQLite then opens and writes keep the mode). */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
}

/** Creates the folder `path` and its missing parents 0700; an existing folder is left as it is (the operator's). */
export function ensurePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * The warning for a private file that group or others can read, naming the file and the `chmod` that fixes it;
 * undefined when it is private or absent.
 */
export function looseModeWarning(path: string, what: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st || (st.mode & 0o077) === 0) return undefined;
  const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
  return `${what} ${path} is readable by ${st.mode & 0o070 ? 'its group' : ''}${(st.mode & 0o070) && (st.mode & 0o007) ? ' and ' : ''}${st.mode & 0o007 ? 'other users' : ''} (mode ${mode}); it holds personal data: run chmod 600 ${path}`;
}
