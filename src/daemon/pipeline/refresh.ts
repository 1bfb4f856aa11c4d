/** The refresh stage: brings the mirror up to date with the platform (incrementally, or a full walk). */
import type { EntityKind } from '../../domain/index.js';
import { isPlatformError, platformFailure } from '../../platform/errors.js';
import { refreshMirror } from '../refresh-mirror.js';
import type { RefreshSettings } from './options.js';
import type { RunParts } from './run-state.js';

/** Which part of the mirror to refresh: some entities (after a 409), or a forced full walk. */
export interface RefreshRequest {
  entities?: readonly EntityKind[];
  full?: boolean;
}

/** Refreshes the mirror; a platform failure becomes PLATFORM_ERROR (exit 1), naming what the platform said. */
export async function refreshStage(parts: Pick<RunParts, 'client' | 'mirror' | 'clock' | 'logger' | 'signal'>, settings: RefreshSettings, request: RefreshRequest = {}): Promise<void> {
  try {
    await refreshMirror({
      client: parts.client,
      mirror: parts.mirror,
      clock: parts.clock,
      logger: parts.logger,
      overlapSeconds: settings.overlapSeconds,
      fullWalkEveryMs: settings.fullWalkEveryMs,
      ...(request.full === true ? { full: true } : {}),
      ...(request.entities ? { entities: request.entities } : {}),
      ...(parts.signal ? { signal: parts.signal } : {}),
    });
  } catch (err) {
    if (isPlatformError(err)) throw platformFailure(err);
    throw err;
  }
}
