/**
 * Errors of the translation API. The spec names the codes and leaves the HTTP statuses and the body shape open;
 * our choices (README "Document translation API") are this table and the body
 * `{ "error": { "code", "message" }, "meta": { "request_id" } }` (the same shape as the tenant API's organisation
 * endpoints, so one client parser reads both).
 */

/** Every error code the translation API answers with, and its HTTP status. */
export const TRANSLATE_ERROR_STATUS = {
  // The spec's codes.
  invalid_api_key: 401,
  api_key_disabled: 403,
  insufficient_credits: 402,
  idempotency_key_required: 400,
  idempotency_conflict: 409,
  file_too_large: 413,
  unsupported_pdf: 422,
  ocr_required: 422,
  artifact_not_found: 404,
  // Ours, for what the spec does not name.
  invalid_request: 400,
  not_found: 404,
  internal_error: 500,
} as const;

/** A code of the table above. */
export type TranslateErrorCode = keyof typeof TRANSLATE_ERROR_STATUS;

/** A typed error a handler throws; the app's error handler renders it with its status and body. */
export class TranslateApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: TranslateErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TranslateApiError';
    this.status = TRANSLATE_ERROR_STATUS[code];
  }
}

/** The error body. */
export function translateErrorBody(code: string, message: string, requestId: string): { error: { code: string; message: string }; meta: { request_id: string } } {
  return { error: { code, message }, meta: { request_id: requestId } };
}
