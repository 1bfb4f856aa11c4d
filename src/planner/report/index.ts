/** The plan report (issue 20): a self-contained HTML rendering of a Plan, with its department tree. */
export * from './html.js';
export * from './tree.js';
