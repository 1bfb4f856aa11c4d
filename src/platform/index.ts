/** The platform client: the port, the real client, its errors. */
export * from './port.js';
export * from './errors.js';
export * from './client.js';
export * from './pacing.js';
export * from './retry.js';
export * from './schemas.js';
