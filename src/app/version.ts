import { installedPackage } from './package-root.js';

/** orgsync's version, from package.json (one place to bump). */
export const VERSION: string = installedPackage().version;
