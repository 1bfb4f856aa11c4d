/**
 * The one status line of a terminal (the sync's progress): log lines written meanwhile clear it first and redraw it
 * after, so a log line is never glued onto it and the progress stays the last line on the screen.
 */
export class TerminalLine {
  private text = '';

  constructor(private readonly stream: NodeJS.WritableStream) {}

  /** Shows `text` as the status line (replacing the previous one). */
  set(text: string): void {
    this.text = text;
    this.stream.write(`\r\u001b[2K${text}`);
  }

  /** Writes `line` (ending in a newline) above the status line. */
  print(line: string): void {
    if (this.text === '') {
      this.stream.write(line);
      return;
    }
    this.stream.write(`\r\u001b[2K${line}${this.text}`);
  }

  /** Leaves the status line as it is, on a line of its own, and forgets it. */
  done(): void {
    if (this.text === '') return;
    this.text = '';
    this.stream.write('\n');
  }
}
