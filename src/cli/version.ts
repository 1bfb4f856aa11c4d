/** orgsync's version (src/app/version.ts, which the composition root reports in build_info). */
export { VERSION } from '../app/version.js';
