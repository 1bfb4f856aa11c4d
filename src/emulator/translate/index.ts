// Placeholder: the translation area replaces this with its own listener (document-translation-api.md).
/** Starts the translation API on its own listener. */
export async function startTranslateServer(_opts: { host: string; port: number; seed: unknown; clock?: unknown }): Promise<{ url: string; close(): Promise<void> }> {
  throw new Error('the translation API is not built yet');
}
